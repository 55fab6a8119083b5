package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/forgectx/forgectx/internal/platform/inputfile"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

func init() {
	register(&command{
		Name:    "snapshot",
		Summary: "assemble an entity-context-snapshot v1 tree from a forge or an acquisition file",
		Run:     runSnapshot,
	})
}

// snapshotOptions are the `forgectx snapshot` flags.
type snapshotOptions struct {
	FromAcquisition string
	Forge           forgeOptions
	Profile         string
	Category        string
	Bots            string
	SecretEnv       []string
	Out             string
}

const snapshotSynopsis = "snapshot (--from-acquisition FILE | --forge github|gitlab|forgejo --repo OWNER/NAME --number N [--api-url URL] [--token-env NAME] [--record DIR] [--replay DIR] [--stats FILE] [--insecure-http] [--concurrency N]) --profile FILE --category observation|mutation [--bots FILE] [--secret-env NAME]... --out DIR"

func runSnapshot(ctx context.Context, e *env, args []string) error {
	var o snapshotOptions
	var secrets stringList
	fs := newFlagSet(e, "snapshot", snapshotSynopsis)
	fs.StringVar(&o.FromAcquisition, "from-acquisition", "", "assemble from this acquisition JSON file (docs/acquisition.md; - for stdin)")
	fs.StringVar(&o.Forge.Forge, "forge", "", "read the entity from this forge: github, gitlab or forgejo")
	fs.StringVar(&o.Forge.Repo, "repo", "", "repository OWNER/NAME (GitLab: full path)")
	fs.IntVar(&o.Forge.Number, "number", 0, "issue, pull request or merge request number")
	fs.StringVar(&o.Forge.APIURL, "api-url", "", "forge API base URL (default: https://api.github.com for github, https://gitlab.com/api/v4 for gitlab; required for forgejo)")
	fs.StringVar(&o.Forge.TokenEnv, "token-env", "", "name of the environment variable holding the API token, never the token itself (default: GITHUB_TOKEN for github, FORGEJO_TOKEN for forgejo; gitlab: none, unauthenticated)")
	fs.StringVar(&o.Forge.Record, "record", "", "record API responses into this cassette directory")
	fs.StringVar(&o.Forge.Replay, "replay", "", "replay API responses from this cassette directory (offline)")
	fs.StringVar(&o.Forge.Stats, "stats", "", "write request statistics JSON to this file")
	fs.BoolVar(&o.Forge.InsecureHTTP, "insecure-http", false, "allow a plain-http --api-url to a non-loopback host (the token crosses the network in clear; logged)")
	concurrencyFlag(fs, &o.Forge.Concurrency)
	fs.StringVar(&o.Profile, "profile", "", "collection profile JSON (collection.json without admission)")
	fs.StringVar(&o.Category, "category", "", "agent category: observation (admits triage and above) or mutation (write and above)")
	fs.StringVar(&o.Bots, "bots", "", `bot registry JSON {"bots":[{"id":…,"login":…,"bot_role":…}]} (default: no bots admitted)`)
	fs.Var(&secrets, "secret-env", "name of an environment variable whose value the filter redacts as a run credential (repeatable)")
	fs.StringVar(&o.Out, "out", "", "directory to write the tree into (created with mode 0700; must be empty)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.SecretEnv = secrets
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if err := o.validate(); err != nil {
		return err
	}
	return snapshotRun(ctx, e, o)
}

// validate checks the flag combinations.
func (o snapshotOptions) validate() error {
	f := o.Forge
	f.Concurrency = 0 // has a default: not a forge flag the caller gave
	fromForge := f != (forgeOptions{})
	if err := checkConcurrency(o.Forge.Concurrency); err != nil {
		return err
	}
	switch {
	case o.FromAcquisition != "" && fromForge:
		return usagef("--from-acquisition and the --forge flags are mutually exclusive")
	case o.FromAcquisition == "" && !fromForge:
		return usagef("one of --from-acquisition or --forge is required")
	case fromForge && (o.Forge.Forge == "" || o.Forge.Repo == "" || o.Forge.Number < 1):
		return usagef("--forge, --repo and a positive --number are required together")
	case o.Profile == "":
		return usagef("--profile is required")
	case o.Category == "":
		return usagef("--category is required (observation or mutation)")
	case o.Out == "":
		return usagef("--out is required")
	}
	return nil
}

// snapshotRun is `forgectx snapshot` once the flags are parsed: everything that can be wrong
// with the configuration is rejected before any fetch; then one acquisition (from the forge
// registry or the file) and one assembly.
func snapshotRun(ctx context.Context, e *env, o snapshotOptions) error {
	profile, bots, err := o.configs()
	if err != nil {
		return err
	}
	names := append([]string(nil), o.SecretEnv...)
	if o.Forge.TokenEnv != "" {
		names = append(names, o.Forge.TokenEnv)
	}
	pipeline := filter.New(filter.SecretEnvValues(e.Environ(), names))

	var acq *acquisition.Acquisition
	// An acquisition file of known size sets the soft memory limit of the assembly (restored
	// afterwards) unless the operator chose one with GOMEMLIMIT.
	var memLimit int64
	if o.FromAcquisition != "" && o.FromAcquisition != "-" && e.Getenv("GOMEMLIMIT") == "" {
		if fi, err := os.Stat(o.FromAcquisition); err == nil && fi.Mode().IsRegular() {
			memLimit = snapshot.MemoryLimit(fi.Size())
		}
	}
	if memLimit > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(memLimit))
	}
	if o.FromAcquisition == "" {
		acq, err = acquireFromForge(ctx, e, o.Forge, profile)
	} else {
		acq, err = readAcquisition(e, o.FromAcquisition)
	}
	if err != nil {
		return err
	}
	// The acquisition is not read again: its bodies may go as soon as they are filtered, and
	// each record file is written (to a staging directory renamed to --out once the tree is
	// valid) as soon as it is final, so the tree is never held in memory whole.
	tree, err := snapshot.AssembleTo(ctx, acq, snapshot.Config{Profile: profile, Category: o.Category, Bots: bots, Filter: pipeline, ReleaseBodies: true}, o.Out)
	if err != nil {
		if snapshot.IsConfigError(err) {
			return usagef("%v", err)
		}
		var ab *snapshot.AbortError
		if errors.As(err, &ab) {
			e.Log.Error().Str("scope", ab.Scope).Str("code", ab.Code).Msg("snapshot aborted")
		}
		return fmt.Errorf("snapshot: %w", err)
	}
	e.Log.Info().Str("index_sha256", tree.IndexSHA256).Int("files", tree.Summary.Files).Int("gaps", len(tree.Summary.Gaps)).Int64("memory_limit_bytes", memLimit).Msg("snapshot written")
	line, err := json.Marshal(struct {
		Out         string           `json:"out"`
		IndexSHA256 string           `json:"index_sha256"`
		Summary     snapshot.Summary `json:"summary"`
	}{o.Out, tree.IndexSHA256, tree.Summary})
	if err != nil {
		return fmt.Errorf("snapshot: summary: %w", err)
	}
	_, err = fmt.Fprintf(e.Stdout, "%s\n", line)
	return err
}

// configs reads the profile and bot registry and checks the category and --out.
func (o snapshotOptions) configs() (acquisition.Profile, []snapshot.BotIdentity, error) {
	profile, err := readConfig(o.Profile, "--profile", snapshot.ReadProfile)
	if err != nil {
		return profile, nil, err
	}
	if _, err := snapshot.HumanMinRole(o.Category); err != nil {
		return profile, nil, usagef("--category: %v", err)
	}
	var bots []snapshot.BotIdentity
	if o.Bots != "" {
		if bots, err = readConfig(o.Bots, "--bots", snapshot.ReadBots); err != nil {
			return profile, nil, err
		}
	}
	// Every output is checked before the first request: a bad --out, --stats or --record path
	// is exit 2 now, not exit 1 after the whole fetch.
	if err := checkSnapshotOutputs(o.Out, o.Forge.Stats, o.Forge.Record); err != nil {
		return profile, nil, err
	}
	if fi, err := os.Lstat(o.Out); err == nil && fi.IsDir() {
		if ents, _ := os.ReadDir(o.Out); len(ents) > 0 {
			return profile, nil, usagef("--out %s: directory is not empty", o.Out)
		}
	}
	return profile, bots, nil
}

// readConfig opens a profile or bots file and decodes it; any problem is a usage error naming
// the flag, the field and the rule.
func readConfig[T any](path, flagName string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := inputfile.Open(path)
	if err != nil {
		return zero, inputErr(flagName, err)
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		return zero, usagef("%s %s: %v", flagName, path, err)
	}
	return v, nil
}

// readAcquisition reads the acquisition from a regular file or stdin ("-"); either is read
// through the acquisition package's 1 GiB document bound while reading (acquisition.Read).
func readAcquisition(e *env, path string) (*acquisition.Acquisition, error) {
	var r io.Reader = e.Stdin
	if path != "-" {
		f, err := inputfile.Open(path)
		if err != nil {
			return nil, inputErr("--from-acquisition", err)
		}
		defer f.Close()
		r = f
	}
	acq, err := acquisition.Read(r)
	if err != nil {
		return nil, &exitError{Code: exitFailed, Err: fmt.Errorf("snapshot: --from-acquisition %s: %w", path, err)}
	}
	return acq, nil
}
