package snapshot_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

const (
	demoHead  = "5b3c9d1e2f4a6b7c8d9e0f1a2b3c4d5e6f7a8b9c"
	sha256OID = "5b3c9d1e2f4a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0123456789abcdef01234567"
)

// hostileWant is what a hostile acquisition must produce instead of a panic.
type hostileWant struct {
	abort string // gap code of the expected *AbortError; "" means a tree
	err   string // a plain acquisition error containing this text
	scope string // a gap row expected in the tree (scope, code, minimum count)
	code  string
	count int
}

type want = hostileWant

const bigLine = 1 << 60

// hostileCases mutate the change-proposal scenario into hostile acquisitions. They are also
// FuzzAssemble seeds.
var hostileCases = []struct {
	rule   string
	mutate func(a *acquisition.Acquisition)
	want   hostileWant
}{
	{"duplicate comment IDs: every copy is invalid_metadata", func(a *acquisition.Acquisition) {
		a.Comments = append(a.Comments, a.Comments[0])
	}, want{scope: "comments", code: "invalid_metadata", count: 2}},
	{"duplicate review IDs", func(a *acquisition.Acquisition) {
		a.Reviews = append(a.Reviews, a.Reviews[0])
	}, want{scope: "reviews", code: "invalid_metadata", count: 2}},
	{"duplicate thread IDs", func(a *acquisition.Acquisition) {
		a.Threads = append(a.Threads, a.Threads[0])
	}, want{scope: "reviews", code: "invalid_metadata", count: 2}},
	{"duplicate check IDs", func(a *acquisition.Acquisition) {
		a.Checks = append(a.Checks, a.Checks[0])
	}, want{scope: "checks", code: "invalid_metadata", count: 2}},
	{"duplicate agent-run IDs", func(a *acquisition.Acquisition) {
		a.AgentRuns = append(a.AgentRuns, a.AgentRuns[0])
	}, want{scope: "agent_runs", code: "invalid_metadata", count: 2}},
	{"identical duplicate actor rows collapse", func(a *acquisition.Acquisition) {
		a.Actors = append(a.Actors, a.Actors[1])
	}, want{}},
	{"conflicting duplicate actor rows fail closed", func(a *acquisition.Acquisition) {
		x := a.Actors[1] // bob, maintain
		x.Role = sp("admin")
		a.Actors = append(a.Actors, x)
	}, want{scope: "actors", code: "invalid_metadata", count: 1}},
	{"thread referencing missing comments", func(a *acquisition.Acquisition) {
		a.Threads[0].CommentIDs = append(a.Threads[0].CommentIDs, "PRRC_missing1", "PRRC_missing2")
		a.Threads[0].Replies = append(a.Threads[0].Replies, acquisition.Reply{ID: "PRRC_missing1", ParentID: "PRRC_kwDOLxDemo01r0001"})
	}, want{}},
	{"thread of only missing comments is omitted", func(a *acquisition.Acquisition) {
		a.Threads[1].CommentIDs = []string{"PRRC_missing1"}
	}, want{}},
	{"reply whose parent is in another thread", func(a *acquisition.Acquisition) {
		a.Threads[0].Replies = append(a.Threads[0].Replies, acquisition.Reply{ID: "PRRC_kwDOLxDemo01r0002", ParentID: "PRRC_kwDOLxDemo01r0004"})
	}, want{}},
	{"reply cycle makes the thread invalid, never repaired", func(a *acquisition.Acquisition) {
		a.Threads[0].Replies = append(a.Threads[0].Replies, acquisition.Reply{ID: "PRRC_kwDOLxDemo01r0001", ParentID: "PRRC_kwDOLxDemo01r0002"})
	}, want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"longer reply cycle through missing comments", func(a *acquisition.Acquisition) {
		a.Threads[0].Replies = append(a.Threads[0].Replies,
			acquisition.Reply{ID: "PRRC_kwDOLxDemo01r0001", ParentID: "PRRC_gone1"},
			acquisition.Reply{ID: "PRRC_gone1", ParentID: "PRRC_gone2"},
			acquisition.Reply{ID: "PRRC_gone2", ParentID: "PRRC_kwDOLxDemo01r0002"})
	}, want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"self reply makes the thread invalid", func(a *acquisition.Acquisition) {
		a.Threads[0].Replies = append(a.Threads[0].Replies, acquisition.Reply{ID: "PRRC_kwDOLxDemo01r0001", ParentID: "PRRC_kwDOLxDemo01r0001"})
	}, want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"a repeated identical reply edge is one edge", func(a *acquisition.Acquisition) {
		a.Threads[0].Replies = append(a.Threads[0].Replies, a.Threads[0].Replies[0])
	}, want{}},
	{"a reply to a deleted comment keeps the thread", func(a *acquisition.Acquisition) {
		a.Threads[0].Replies = append(a.Threads[0].Replies, acquisition.Reply{ID: "PRRC_kwDOLxDemo01r0001", ParentID: "PRRC_deleted"})
	}, want{}},
	{"a reply with two parents makes the thread invalid", func(a *acquisition.Acquisition) {
		a.Threads[0].CommentIDs = append(a.Threads[0].CommentIDs, "PRRC_kwDOLxDemo01r0003")
		a.Threads[1].CommentIDs = []string{"PRRC_kwDOLxDemo01r0005"}
		a.Threads[2].CommentIDs = []string{"PRRC_kwDOLxDemo01r0004"}
		a.Threads[2].Replies = nil
		a.Threads[0].Replies = append(a.Threads[0].Replies,
			acquisition.Reply{ID: "PRRC_kwDOLxDemo01r0003", ParentID: "PRRC_kwDOLxDemo01r0001"},
			acquisition.Reply{ID: "PRRC_kwDOLxDemo01r0003", ParentID: "PRRC_kwDOLxDemo01r0002"},
			acquisition.Reply{ID: "PRRC_kwDOLxDemo01r0002", ParentID: "PRRC_kwDOLxDemo01r0001"})
	}, want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"a thread listing a comment twice", func(a *acquisition.Acquisition) {
		a.Threads[0].CommentIDs = append(a.Threads[0].CommentIDs, a.Threads[0].CommentIDs[0])
	}, want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"one comment in two threads", func(a *acquisition.Acquisition) {
		a.Threads[2].CommentIDs = append(a.Threads[2].CommentIDs, "PRRC_kwDOLxDemo01r0001")
	}, want{}},
	{"thread naming a review that is not retained", func(a *acquisition.Acquisition) {
		a.Threads[0].ReviewID = "PRR_kwDOLxNoSuchReview"
	}, want{}},
	{"thread of a filter-rejected review", func(a *acquisition.Acquisition) {
		a.Reviews[0].Body = injection
	}, want{scope: "reviews", code: "unsafe_content", count: 1}},
	{"unresolved thread with a resolver", func(a *acquisition.Acquisition) {
		a.Threads[2].ResolvedBy = &acquisition.ActorRef{ID: sp("U_kgDOCarol003")}
	}, want{}},
	{"resolved thread with a deleted resolver", func(a *acquisition.Acquisition) {
		a.Threads[0].ResolvedBy = &acquisition.ActorRef{}
	}, want{}},
	{"checks for other SHAs", func(a *acquisition.Acquisition) {
		a.Checks[0].HeadSHA = strings.Repeat("1", 40)
		a.Checks[1].HeadSHA = sha256OID
	}, want{scope: "checks", code: "invalid_metadata", count: 2}},
	{"64-hex SHA-256 object IDs everywhere", func(a *acquisition.Acquisition) {
		a.Entity.HeadSHA = sha256OID
		for i := range a.Checks {
			a.Checks[i].HeadSHA = sha256OID
		}
		a.Reviews[0].ReviewedSHA = sha256OID
		a.Threads[0].ReviewedSHA = sha256OID
		a.AgentRuns[0].InputHeadSHA = sha256OID
		a.AgentRuns[0].ResultingCommitSHA = sha256OID
	}, want{}},
	{"uppercase head SHA: checks are invalid, never lowercased", func(a *acquisition.Acquisition) {
		a.Entity.HeadSHA = strings.ToUpper(demoHead)
		for i := range a.Checks {
			a.Checks[i].HeadSHA = a.Entity.HeadSHA
		}
	}, want{scope: "checks", code: "invalid_metadata", count: 4}},
	{"uppercase reviewed SHA omits the review", func(a *acquisition.Acquisition) {
		a.Reviews[0].ReviewedSHA = strings.ToUpper(a.Reviews[0].ReviewedSHA)
	}, want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"uppercase thread SHA omits the thread", func(a *acquisition.Acquisition) {
		a.Threads[0].ReviewedSHA = strings.ToUpper(a.Threads[0].ReviewedSHA)
	}, want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"uppercase and duplicate result record keys", func(a *acquisition.Acquisition) {
		k := strings.Repeat("ab", 32)
		a.AgentRuns[0].ResultRecordKeys = []string{k, k, strings.Repeat("0", 64)}
		r := a.AgentRuns[0]
		r.ID = "IC_kwDOLxDemo01c0098"
		r.ResultRecordKeys = []string{strings.ToUpper(k)}
		a.AgentRuns = append(a.AgentRuns, r)
	}, want{scope: "agent_runs", code: "invalid_metadata", count: 1}},
	{"negative thread line", func(a *acquisition.Acquisition) { a.Threads[0].Line = -1 },
		want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"line beyond 2^53-1", func(a *acquisition.Acquisition) { a.Threads[0].OriginalLine = bigLine },
		want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"entity number zero", func(a *acquisition.Acquisition) { a.Entity.Number = 0 }, want{abort: "invalid_metadata"}},
	{"entity number negative", func(a *acquisition.Acquisition) { a.Entity.Number = -7 }, want{abort: "invalid_metadata"}},
	{"entity number beyond 2^53-1", func(a *acquisition.Acquisition) { a.Entity.Number = bigLine }, want{abort: "invalid_metadata"}},
	{"huge adapter gap counts aggregate", func(a *acquisition.Acquisition) {
		a.Outcomes.Add("comments", "fetch_failed", 1<<50)
		a.Outcomes.Comments = append(a.Outcomes.Comments, acquisition.Gap{Code: "fetch_failed", Count: 1 << 50})
	}, want{scope: "comments", code: "fetch_failed", count: 1 << 51}},
	{"zero adapter gap count", func(a *acquisition.Acquisition) {
		a.Outcomes.Checks = []acquisition.Gap{{Code: "fetch_failed", Count: 0}}
	}, want{err: "outcomes.checks[0].count"}},
	{"negative adapter gap count", func(a *acquisition.Acquisition) {
		a.Outcomes.Actors = []acquisition.Gap{{Code: "fetch_failed", Count: -3}}
	}, want{err: "outcomes.actors[0].count"}},
	{"unknown adapter gap code", func(a *acquisition.Acquisition) {
		a.Outcomes.Reviews = []acquisition.Gap{{Code: "Fetch_Failed", Count: 1}}
	}, want{err: "outcomes.reviews[0].code"}},
	{"adapter gap counts summing beyond 2^53-1", func(a *acquisition.Acquisition) {
		for i := 0; i < 16; i++ {
			a.Outcomes.Comments = append(a.Outcomes.Comments, acquisition.Gap{Code: "fetch_failed", Count: 1 << 50})
		}
	}, want{err: "outcomes.comments"}},
	{"entity created after its comments: records[] by real created_at", func(a *acquisition.Acquisition) {
		a.Entity.CreatedAt = "2030-01-01T00:00:00Z"
	}, want{}},
	{"comment at the entity's creation instant in another offset", func(a *acquisition.Acquisition) {
		a.Comments[0].CreatedAt = "2026-09-01T11:00:00+02:00"
	}, want{}},
	{"timestamps with lowercase t and z and nanoseconds", func(a *acquisition.Acquisition) {
		a.Comments[0].CreatedAt = "2026-09-01t10:12:00.123456789z"
	}, want{}},
	{"timestamp with ten fractional digits", func(a *acquisition.Acquisition) {
		a.Comments[0].CreatedAt = "2026-09-01T10:12:00.1234567891Z"
	}, want{scope: "comments", code: "invalid_metadata", count: 1}},
	{"timestamp beyond year 9999 after UTC conversion", func(a *acquisition.Acquisition) {
		a.Comments[0].CreatedAt = "9999-12-31T23:00:00-02:00"
	}, want{scope: "comments", code: "invalid_metadata", count: 1}},
	{"bodies with NUL, invalid UTF-8, BOM and CRLF", func(a *acquisition.Acquisition) {
		a.Comments[0].Body = "\ufeffa\x00b\xff\xfe\r\nc\rd"
		a.Entity.Body = "\xc3\x28 body\r\n\r\n"
	}, want{}},
	{"bodies of only line breaks or spaces", func(a *acquisition.Acquisition) {
		a.Entity.Body = "\r\n\r\n"
		a.Comments[0].Body = "\n\n\n"
		a.Comments[1].Body = "   "
		a.Reviews[0].Body = "\r"
	}, want{}},
	{"a body over max_source_bytes is never decoded: rejected, no prefix", func(a *acquisition.Acquisition) {
		a.Comments[0].Body = strings.Repeat("x", 1<<20+1)
	}, want{scope: "comments", code: "source_too_large", count: 1}},
	{"an entity body over max_source_bytes aborts", func(a *acquisition.Acquisition) {
		a.Entity.Body = strings.Repeat("x", 1<<20+1)
	}, want{abort: "source_too_large"}},
	{"invisible-only comment body becomes empty", func(a *acquisition.Acquisition) {
		a.Comments[0].Body = "\u200b\u200d\ufeff\U000e0041"
	}, want{}},
	{"login with invisible characters and an empty login", func(a *acquisition.Acquisition) {
		a.Actors[0].Login = sp("al\u200bice")
		a.Actors[1].Login = sp("")
	}, want{}},
	{"title of only invisible characters aborts", func(a *acquisition.Acquisition) {
		a.Entity.Title = "\u200b\u2066"
	}, want{abort: "invalid_metadata"}},
	{"title with a prompt injection aborts", func(a *acquisition.Acquisition) {
		a.Entity.Title = injection
	}, want{abort: "unsafe_content"}},
	{"entity body with a prompt injection aborts", func(a *acquisition.Acquisition) {
		a.Entity.Body = injection
	}, want{abort: "unsafe_content"}},
	{"entity author deleted aborts", func(a *acquisition.Acquisition) {
		a.Entity.Author = acquisition.ActorRef{}
	}, want{abort: "authorization_failed"}},
	{"entity author below the threshold aborts", func(a *acquisition.Acquisition) {
		a.Entity.Author = acquisition.ActorRef{ID: sp("U_kgDOMallory5")}
	}, want{abort: "authorization_failed"}},
	{"entity state outside the v1 mapping aborts", func(a *acquisition.Acquisition) {
		a.Entity.State = "locked"
	}, want{abort: "invalid_metadata"}},
	{"entity id outside the forge mapping aborts", func(a *acquisition.Acquisition) {
		a.Entity.ID = "PR kw"
	}, want{abort: "invalid_metadata"}},
	{"uppercase source host aborts", func(a *acquisition.Acquisition) { a.Source.Host = "GitHub.com" }, want{abort: "invalid_metadata"}},
	{"source host with :443 aborts", func(a *acquisition.Acquisition) { a.Source.Host = "github.com:443" }, want{abort: "invalid_metadata"}},
	{"source host with a scheme aborts", func(a *acquisition.Acquisition) { a.Source.Host = "https://github.com" }, want{abort: "invalid_metadata"}},
	{"source host with port 0 aborts", func(a *acquisition.Acquisition) { a.Source.Host = "github.com:0" }, want{abort: "invalid_metadata"}},
	{"source host with port 65536 aborts", func(a *acquisition.Acquisition) { a.Source.Host = "github.com:65536" }, want{abort: "invalid_metadata"}},
	{"source host with a non-default port", func(a *acquisition.Acquisition) { a.Source.Host = "ghe.example.com:8443" }, want{}},
	{"source repository with an invisible character aborts", func(a *acquisition.Acquisition) {
		a.Source.Repository = "acme/wid\u200bgets"
	}, want{abort: "unsafe_content"}},
	{"source repository uppercase aborts (never lowercased)", func(a *acquisition.Acquisition) {
		a.Source.Repository = "Acme/widgets"
	}, want{abort: "invalid_metadata"}},
	{"review path with a bidi control omits the thread", func(a *acquisition.Acquisition) {
		a.Threads[0].Path = "internal/\u202eog.yrter"
	}, want{scope: "reviews", code: "unsafe_content", count: 1}},
	{"review path with a secret omits the thread", func(a *acquisition.Acquisition) {
		a.Threads[0].Path = "ghp_R4nd0mTok3nV4lu3F0rTh3D3m0xx12345678/x.go"
	}, want{scope: "reviews", code: "unsafe_content", count: 1}},
	{"review path with a percent-encoded dot", func(a *acquisition.Acquisition) {
		a.Threads[0].Path = "a/%2e%2e/b"
	}, want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"review path with a backslash", func(a *acquisition.Acquisition) {
		a.Threads[0].Path = `a\..\b`
	}, want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"review path with non-ASCII letters", func(a *acquisition.Acquisition) {
		a.Threads[0].Path = "docs/über.md"
	}, want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"review side uppercase", func(a *acquisition.Acquisition) { a.Threads[0].Side = "RIGHT" },
		want{scope: "reviews", code: "invalid_metadata", count: 1}},
	{"check log of invalid UTF-8 and terminal escapes", func(a *acquisition.Acquisition) {
		a.Checks[1].Log.Content = []byte("\x1b[31mFAIL\x1b[0m \xff\xfe\x00 done\r\n")
	}, want{}},
	{"check name that is a prompt injection rejects only the check", func(a *acquisition.Acquisition) {
		a.Checks[0].Name = injection
	}, want{scope: "checks", code: "unsafe_content", count: 1}},
	{"agent name of only invisible characters rejects only the receipt", func(a *acquisition.Acquisition) {
		a.AgentRuns[0].Agent = "\u200b"
	}, want{scope: "agent_runs", code: "invalid_metadata", count: 1}},
	{"record author not observed in actors", func(a *acquisition.Acquisition) {
		a.Actors = a.Actors[:len(a.Actors)-1] // drop the bot: its comment and receipt are unauthorized
	}, want{scope: "comments", code: "authorization_failed", count: 2}},
	{"human with role bot is invalid", func(a *acquisition.Acquisition) {
		a.Actors[3].Role = sp("bot")
	}, want{scope: "actors", code: "invalid_metadata", count: 1}},
	{"an over-long numeric-looking ID is invalid, never truncated", func(a *acquisition.Acquisition) {
		a.Comments[0].ID = "IC_" + strings.Repeat("9", 4096)
	}, want{scope: "comments", code: "invalid_metadata", count: 1}},
	{"no comments, reviews, threads, checks, runs or actors beyond the author", func(a *acquisition.Acquisition) {
		a.Comments, a.Reviews, a.Threads, a.Checks, a.AgentRuns = nil, nil, nil, nil, nil
		a.Actors = a.Actors[:1]
	}, want{}},
}

// Hostile acquisitions (untrusted --from-acquisition input): nothing panics, and every tree the
// assembler returns passes both schema bundles and the consumer-side verifier (internal/snapshot/verify,
// `forgectx verify`) with its retained index digest — the assemble helper checks both. Each
// row names what must happen instead: a tree with a gap, or an abort of the named code.
func TestHostileAcquisitionsNeverPanicAndEveryTreeVerifies(t *testing.T) {
	for _, tc := range hostileCases {
		t.Run(tc.rule, func(t *testing.T) {
			acq, cfg := demo(t)
			a := clone(t, acq)
			tc.mutate(a)
			if tc.want.err != "" {
				err := assembleErr(a, cfg)
				var ab *snapshot.AbortError
				if err == nil || errors.As(err, &ab) || !strings.Contains(err.Error(), tc.want.err) {
					t.Fatalf("want an acquisition error naming %s, got %v", tc.want.err, err)
				}
				return
			}
			if tc.want.abort != "" {
				tree, err := snapshot.Assemble(context.Background(), a, cfg)
				var ab *snapshot.AbortError
				if !errors.As(err, &ab) || tree != nil {
					t.Fatalf("want an abort, got tree=%v err=%v", tree != nil, err)
				}
				if ab.Code != tc.want.abort {
					t.Fatalf("abort code %s (%v), want %s", ab.Code, ab, tc.want.abort)
				}
				return
			}
			tree := assemble(t, a, cfg) // validates both bundles and runs verify.Dir
			if tc.want.scope != "" {
				if n := gapCount(index(t, tree), tc.want.scope, tc.want.code); n < tc.want.count {
					t.Fatalf("gap %s/%s count %d, want at least %d; gaps %v", tc.want.scope, tc.want.code, n, tc.want.count, index(t, tree).Gaps)
				}
			}
		})
	}
}

// Collection profiles: exceeding max_metadata_string_bytes makes a structural value invalid —
// Git object IDs and digests included — and it is never truncated.
func TestStructuralValuesOverTheMetadataBoundAreInvalid(t *testing.T) {
	acq, cfg := demo(t)
	a := clone(t, acq)
	a.Reviews[0].ReviewedSHA = sha256OID // 64 bytes
	a.AgentRuns[0].InputHeadSHA = sha256OID
	cfg.Profile.Bounds.MaxMetadataStringBytes = 63 // 64-hex input_revision is over it too
	d := index(t, assemble(t, a, cfg))
	if gapCount(d, "reviews", "invalid_metadata") != 1 || gapCount(d, "agent_runs", "invalid_metadata") != 1 {
		t.Fatalf("gaps %v: want the review and the receipt invalid", d.Gaps)
	}
	for _, r := range d.Records {
		if r.ID == a.Reviews[0].ID {
			t.Error("the review with an over-long reviewed_sha was emitted")
		}
	}
}
