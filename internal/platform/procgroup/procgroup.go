// Package procgroup runs a child process in its own process group and ends the whole group:
// the one implementation behind `forgectx prescript`, the pre-script, agent and post-script of
// `forgectx run`, so that a script's background children (`(sleep 60)&`, a forgotten daemon)
// never outlive it, keep the captured streams open, or keep running with the job's
// environment after forgectx has moved on.
package procgroup
