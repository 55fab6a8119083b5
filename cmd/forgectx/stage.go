package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

func init() {
	register(&command{
		Name:    "stage",
		Summary: "stage a snapshot tree for an agent: create, verify-copy (read-only sandbox copy), cleanup, scavenge",
		Run:     runStageCmd,
	})
}

// maxPID is Linux's PID_MAX_LIMIT on 64-bit systems: no process ID is larger.
const maxPID = 1 << 22

const stageSynopsis = `stage create --from DIR [--index-sha256 HEX] [--base DIR] [--state-dir DIR] [--artifacts-dir DIR]... [--owner-pid PID]
       forgectx stage verify-copy --id ID [--mode auto|ownership|bind-mount] [--agent-uid UID --agent-gid GID] [--state-dir DIR]
       forgectx stage cleanup --id ID [--state-dir DIR]
       forgectx stage scavenge [--state-dir DIR]`

// stageOptions is what the `forgectx stage` subcommands parse their flags into.
type stageOptions struct {
	Sub         string
	From        string
	IndexSHA256 string
	Base        string
	StateDir    string
	Artifacts   []string
	OwnerPID    int
	ID          string
	Mode        string
	AgentUID    int
	AgentGID    int
}

func runStageCmd(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fs := newFlagSet(e, "stage", stageSynopsis)
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		return usagef("want a subcommand: create, verify-copy, cleanup or scavenge")
	}
	o := stageOptions{Sub: args[0]}
	fs := newFlagSet(e, "stage "+o.Sub, stageSynopsis)
	fs.StringVar(&o.StateDir, "state-dir", "", "host-private state root, mode 0700 (default $TMPDIR/forgectx-stage-<euid>)")
	var artifacts stringList
	switch o.Sub {
	case "create":
		fs.StringVar(&o.From, "from", "", "snapshot tree `DIR` to stage (verified first)")
		fs.StringVar(&o.IndexSHA256, "index-sha256", "", "retained SHA-256 (`HEX`) of the assembled root index.json (default: the digest of DIR's index.json as verified now)")
		fs.StringVar(&o.Base, "base", "", "directory the host tree and sandbox copy are created in (default $TMPDIR)")
		fs.Var(&artifacts, "artifacts-dir", "retained run-output or artifacts `DIR` the trees must stay out of (repeatable)")
		fs.IntVar(&o.OwnerPID, "owner-pid", 0, "`PID` of the process whose exit makes the stage abandoned, for scavenging (default: the calling process)")
	case "verify-copy":
		fs.StringVar(&o.ID, "id", "", "stage `ID` printed by create")
		fs.StringVar(&o.Mode, "mode", string(stage.ModeAuto), "immutability: auto, ownership (root-owned 0555/0444, agent unprivileged) or bind-mount")
		fs.IntVar(&o.AgentUID, "agent-uid", 0, "unprivileged `UID` the agent will run as (ownership mode)")
		fs.IntVar(&o.AgentGID, "agent-gid", 0, "unprivileged `GID` the agent will run as (ownership mode)")
	case "cleanup":
		fs.StringVar(&o.ID, "id", "", "stage `ID` printed by create")
	case "scavenge":
	default:
		return usagef("unknown subcommand %q: want create, verify-copy, cleanup or scavenge", o.Sub)
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	o.Artifacts = artifacts
	base := stage.Options{Base: o.Base, StateDir: o.StateDir, Forbidden: o.Artifacts, Getenv: e.Getenv, OwnerPID: o.OwnerPID, Log: &e.Log}
	switch o.Sub {
	case "create":
		return stageCreateCmd(ctx, e, o, base)
	case "verify-copy":
		return stageVerifyCopy(ctx, e, o, base)
	case "cleanup":
		return stageCleanup(e, o, base)
	}
	return stageScavenge(ctx, e, base)
}

// stageCreateCmd checks the create flags and stages --from.
func stageCreateCmd(ctx context.Context, e *env, o stageOptions, base stage.Options) error {
	if o.From == "" {
		return usagef("--from DIR is required")
	}
	var err error
	if o.IndexSHA256, err = digestFlag(o.IndexSHA256); err != nil {
		return err
	}
	if o.OwnerPID < 0 || o.OwnerPID > maxPID {
		return usagef("--owner-pid: must be a process ID, 1 to %d (0 or unset: the calling process)", maxPID)
	}
	if o.OwnerPID == 0 {
		o.OwnerPID = os.Getppid()
		base.OwnerPID = o.OwnerPID
	}
	return stageCreate(ctx, e, o, base)
}

// stageVerifyCopy verifies a stage and makes the agent's read-only copy.
func stageVerifyCopy(ctx context.Context, e *env, o stageOptions, base stage.Options) error {
	if err := checkStageID(o.ID); err != nil {
		return err
	}
	mode, err := stage.ParseMode(o.Mode)
	if err != nil {
		return usagef("--mode: %v", err)
	}
	if o.AgentUID < 0 || o.AgentGID < 0 {
		return usagef("--agent-uid and --agent-gid must be non-negative")
	}
	st, err := stage.Open(base, o.ID)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stage verify-copy %s: unknown stage id (never created, already cleaned up or scavenged, or another --state-dir): %w", o.ID, err)
	}
	if err != nil {
		return err
	}
	sealed, err := st.Seal(ctx, stage.SealOptions{Mode: mode, AgentUID: o.AgentUID, AgentGID: o.AgentGID})
	if err != nil {
		var ve *verify.Error
		if errors.As(err, &ve) {
			_ = ve.Report.WriteText(e.Stderr)
		}
		return fmt.Errorf("stage verify-copy %s: %w", o.ID, err)
	}
	fmt.Fprintf(e.Stdout, "sandbox_dir=%s\nmode=%s\nfiles=%d\nbytes=%d\nindex_sha256=%s\nagent_uid=%d\nagent_gid=%d\n",
		sealed.Dir, sealed.Mode, sealed.Files, sealed.Bytes, sealed.IndexSHA256, sealed.AgentUID, sealed.AgentGID)
	return nil
}

// stageCleanup removes a stage; it is idempotent across processes too: the state goes last,
// so a stage without state was already removed (by an earlier cleanup or the scavenger).
func stageCleanup(e *env, o stageOptions, base stage.Options) error {
	if err := checkStageID(o.ID); err != nil {
		return err
	}
	st, err := stage.Open(base, o.ID)
	if errors.Is(err, os.ErrNotExist) {
		e.Log.Info().Str("stage_id", o.ID).Msg("stage cleanup: nothing left to remove")
		return nil
	}
	if err != nil {
		return err
	}
	return st.Cleanup()
}

// stageScavenge removes abandoned stages.
func stageScavenge(ctx context.Context, e *env, base stage.Options) error {
	rep, err := stage.Scavenge(ctx, base)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "scanned=%d live=%d removed=%d unknown=%d errors=%d\n", rep.Scanned, rep.Live, rep.Removed, rep.Unknown, len(rep.Errors))
	if len(rep.Errors) > 0 {
		return &exitError{Code: exitFailed, Err: fmt.Errorf("stage scavenge: %d stage(s) could not be removed: %s", len(rep.Errors), strings.Join(rep.Errors, ", "))}
	}
	return nil
}

// stageCreate copies --from into a new stage's host tree and verifies the copy
// (stage.CreateFromDir), so a tree of any size is staged without being held in memory.
func stageCreate(ctx context.Context, e *env, o stageOptions, base stage.Options) error {
	st, err := stage.CreateFromDir(ctx, base, o.From, o.IndexSHA256)
	if err != nil {
		var verr *verify.Error
		if errors.As(err, &verr) {
			_ = verr.Report.WriteText(e.Stderr)
			return &exitError{Code: exitFailed, Err: fmt.Errorf("stage create: %s does not verify: %d violation(s)", o.From, len(verr.Report.Violations))}
		}
		return err
	}
	fmt.Fprintf(e.Stdout, "id=%s\nhost_dir=%s\nsandbox_dir=%s\nindex_sha256=%s\n", st.ID, st.HostDir, st.SandboxDir, st.IndexSHA256)
	return nil
}

// checkStageID rejects a missing or malformed --id as a bad flag (exit 2); a well-formed id
// that names no stage is the subcommand's business (verify-copy: exit 1; cleanup: nothing to
// remove, exit 0).
func checkStageID(id string) error {
	switch {
	case id == "":
		return usagef("--id is required")
	case !stage.ValidID(id):
		return usagef("--id: must be the 32 lowercase hexadecimal digits `stage create` printed as id=")
	}
	return nil
}
