// Package procgroup is the one place that starts a child process: Run takes the argv, the exact
// environment, the working directory, the streams, an identity to drop to, a timeout and a
// grace, and the privilege check. It starts the child in its own process group and ends the
// whole group, so that a script's or agent's background children (`(sleep 60)&`, a forgotten
// daemon) never outlive it, keep the captured streams open, or keep running with the job's
// environment after forgectx has moved on. `forgectx prescript`, the pre-script, agent and
// post-script of `forgectx run`, the engine of `review-context run` and the review adapters'
// stdio transport all run through it; TestOnlyProcgroupStartsProcesses keeps it that way.
package procgroup
