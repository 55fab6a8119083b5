package rework

import (
	"reflect"
	"strings"
	"testing"
)

const (
	t1 = "2026-11-21T12:00:00Z"
	t2 = "2026-11-21T13:00:00Z"
	t3 = "2026-11-21T14:00:00Z"
)

// decisionCase is one row of the decision table: a world's reviews and the receipt decision
// the spec requires for them.
type decisionCase struct {
	name     string
	reviews  func(w *world) []fakeReview
	mutate   func(w *world)
	decision string
	reasons  []Reason // exactly these blocking reasons (sorted as the receipt sorts them)
	rework   []int64
	missing  []string
	route    string
}

func approveBoth(w *world) []fakeReview {
	return []fakeReview{
		review(101, specUser, "APPROVED", specBody(w, VerdictApproved, tHead), tHead, t1),
		review(102, codeUser, "APPROVED", codeBody(w, VerdictApproved, tHead), tHead, t2),
	}
}

var decisionCases = []decisionCase{
	{name: "NoOpWhenBothRolesApproveTheCurrentHeadForTheFreshContract", reviews: approveBoth, decision: DecisionNoOp, missing: []string{}, route: RouteNone},
	{name: "ReworkWhenARoleHasACurrentUsableLatestRequest", reviews: func(w *world) []fakeReview {
		return []fakeReview{
			review(101, specUser, "APPROVED", specBody(w, VerdictApproved, tHead), tHead, t1),
			review(102, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, t2, 9001, 9002),
		}
	}, decision: DecisionRework, rework: []int64{102}, missing: []string{}, route: RouteImpl},
	{name: "MissingCounterpartIsInformationAndDoesNotBlockAValidRequest", reviews: func(w *world) []fakeReview {
		return []fakeReview{review(102, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, t2)}
	}, decision: DecisionRework, rework: []int64{102}, missing: []string{RoleSpecReviewer}, route: RouteImpl},
	{name: "SpecApprovalNeverSupersedesACodeRequest", reviews: func(w *world) []fakeReview {
		return []fakeReview{
			review(102, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, t1),
			review(103, specUser, "APPROVED", specBody(w, VerdictApproved, tHead), tHead, t3),
		}
	}, decision: DecisionRework, rework: []int64{102}, missing: []string{}, route: RouteImpl},
	{name: "LaterSameRoleApprovalSupersedesAnEarlierRequest", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w), review(100, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, "2026-11-21T11:00:00Z"))
	}, decision: DecisionNoOp, missing: []string{}, route: RouteNone},
	{name: "ReworkReviewIDsHoldOnlySelectedCurrentRequests", reviews: func(w *world) []fakeReview {
		return []fakeReview{
			review(90, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, oldHead), oldHead, "2026-11-20T09:00:00Z"),
			review(104, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, t3),
			review(103, specUser, "REQUEST_CHANGES", specBody(w, VerdictRequestChanges, tHead), tHead, t2),
			review(95, specUser, "REQUEST_CHANGES", specBody(w, VerdictRequestChanges, tHead), tHead, t1),
		}
	}, decision: DecisionRework, rework: []int64{103, 104}, missing: []string{}, route: RouteImpl},
	{name: "OldHeadHistoryCannotDetermineCurrentHeadAction", reviews: func(w *world) []fakeReview {
		return []fakeReview{review(90, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, oldHead), oldHead, t1)}
	}, decision: DecisionBlocked, reasons: []Reason{ReasonMissingCurrentReview, ReasonMissingCurrentReview}, missing: []string{RoleSpecReviewer, RoleCodeReviewer}, route: RouteNone},
	{name: "StaleAndDismissedReviewsAreExcluded", reviews: func(w *world) []fakeReview {
		stale := review(103, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, t3)
		stale.Stale = true
		dismissed := review(104, specUser, "REQUEST_CHANGES", specBody(w, VerdictRequestChanges, tHead), tHead, t3)
		dismissed.Dismissed = true
		return append(approveBoth(w), stale, dismissed)
	}, decision: DecisionNoOp, missing: []string{}, route: RouteNone},
	{name: "MissingCurrentReview", reviews: func(w *world) []fakeReview {
		return []fakeReview{review(101, specUser, "APPROVED", specBody(w, VerdictApproved, tHead), tHead, t1)}
	}, decision: DecisionBlocked, reasons: []Reason{ReasonMissingCurrentReview}, missing: []string{RoleCodeReviewer}, route: RouteNone},
	{name: "UnrelatedRolesCannotSupplyRequiredApprovals", reviews: func(w *world) []fakeReview {
		return []fakeReview{
			review(101, humanUser, "APPROVED", specBody(w, VerdictApproved, tHead), tHead, t1),
			review(102, codeUser, "APPROVED", codeBody(w, VerdictApproved, tHead), tHead, t2),
		}
	}, decision: DecisionBlocked, reasons: []Reason{ReasonMissingCurrentReview}, missing: []string{RoleSpecReviewer}, route: RouteNone},
	{name: "PendingReview", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w)[:1],
			review(102, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, t2),
			review(105, specUser, "PENDING", "", tHead, t3))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonPendingReview}, missing: []string{}, route: RouteNone},
	{name: "CurrentManualComment", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w), review(106, humanUser, "COMMENT", "Have you considered a smaller cache?", tHead, t3, 9005))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonCurrentManualComment}, missing: []string{}, route: RouteNone},
	{name: "ActualBlockingReasonsWinOverAValidRequest", reviews: func(w *world) []fakeReview {
		return []fakeReview{
			review(102, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, t2),
			review(106, humanUser, "COMMENT", "drive-by", tHead, t3),
		}
	}, decision: DecisionBlocked, reasons: []Reason{ReasonCurrentManualComment}, missing: []string{RoleSpecReviewer}, route: RouteNone},
	{name: "ManualCommentOnAnOldHeadIsHistoryOnly", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w), review(80, humanUser, "COMMENT", "old note", oldHead, "2026-11-20T09:00:00Z"))
	}, decision: DecisionNoOp, missing: []string{}, route: RouteNone},
	{name: "SameInstantConflict", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w)[:1],
			review(102, codeUser, "APPROVED", codeBody(w, VerdictApproved, tHead), tHead, t2),
			review(103, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, "2026-11-21T15:00:00+02:00"))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonSameInstantConflict}, missing: []string{}, route: RouteNone},
	{name: "IdenticalSameInstantRecordsAreOrderedByReviewID", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w), review(107, codeUser, "APPROVED", codeBody(w, VerdictApproved, tHead), tHead, t2))
	}, decision: DecisionNoOp, missing: []string{}, route: RouteNone},
	{name: "OrderByUTCInstantWithNineFractionalDigits", reviews: func(w *world) []fakeReview {
		// 200 is later by one nanosecond despite the lower ID and the offset notation.
		return append(approveBoth(w)[:1],
			review(300, codeUser, "APPROVED", codeBody(w, VerdictApproved, tHead), tHead, "2026-11-21T13:00:00.000000001Z"),
			review(200, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, "2026-11-21T15:00:00.000000002+02:00"))
	}, decision: DecisionRework, rework: []int64{200}, missing: []string{}, route: RouteImpl},
	{name: "BlockedSpecRoutesToDiscovery", reviews: func(w *world) []fakeReview {
		return []fakeReview{
			review(101, specUser, "REQUEST_CHANGES", specBody(w, VerdictBlockedSpec, tHead), tHead, t1),
			review(102, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, t2),
		}
	}, decision: DecisionBlocked, reasons: []Reason{ReasonBlockedSpec}, missing: []string{}, route: RouteDiscovery},
	{name: "MarkerMissing", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w)[:1], review(102, codeUser, "REQUEST_CHANGES", "please fix the cache", tHead, t2))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonMarkerMissing}, missing: []string{}, route: RouteNone},
	{name: "MarkerInvalidMalformedLine", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w)[:1], review(102, codeUser, "APPROVED", CodeMarkerPrefix+"verdict=approved head=XYZ -->\nok", tHead, t2))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonMarkerInvalid}, missing: []string{}, route: RouteNone},
	{name: "MarkerInvalidKindDoesNotMatchRole", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w)[1:], review(101, specUser, "APPROVED", codeBody(w, VerdictApproved, tHead), tHead, t1))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonMarkerInvalid}, missing: []string{}, route: RouteNone},
	{name: "MarkerContradictionHead", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w)[:1], review(102, codeUser, "APPROVED", codeBody(w, VerdictApproved, oldHead), tHead, t2))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonMarkerContradiction}, missing: []string{}, route: RouteNone},
	{name: "MarkerContradictionContract", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w)[:1], review(102, codeUser, "APPROVED", RenderCodeMarker(VerdictApproved, tHead, strings.Repeat("e", 64)), tHead, t2))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonMarkerContradiction}, missing: []string{}, route: RouteNone},
	{name: "MarkerContradictionState", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w)[:1], review(102, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictApproved, tHead), tHead, t2))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonMarkerContradiction}, missing: []string{}, route: RouteNone},
	{name: "MarkerContradictionSpecResultDigest", reviews: func(w *world) []fakeReview {
		body := strings.Replace(specBody(w, VerdictApproved, tHead), "finding 1", "finding 2", 1)
		return append(approveBoth(w)[1:], review(101, specUser, "APPROVED", body, tHead, t1))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonMarkerContradiction}, missing: []string{}, route: RouteNone},
	{name: "RoleBindingInconsistent", reviews: func(w *world) []fakeReview {
		return append(approveBoth(w)[:1], review(102, fakeUser{codeID, "impostor"}, "APPROVED", codeBody(w, VerdictApproved, tHead), tHead, t2))
	}, decision: DecisionBlocked, reasons: []Reason{ReasonRoleBindingInconsistent}, missing: []string{RoleCodeReviewer}, route: RouteNone},
}

// TestDecisionRules runs every decision rule of the spec ("Derived decisions") through two
// captures of a Gitea-shaped fake.
func TestDecisionRules(t *testing.T) {
	for _, c := range decisionCases {
		t.Run(c.name, func(t *testing.T) {
			w := baseWorld()
			w.Reviews = c.reviews(w)
			if c.mutate != nil {
				c.mutate(w)
			}
			res, _ := runWorld(t, w)
			d := res.Decision
			if d.Decision != c.decision {
				t.Fatalf("decision = %s, want %s (reasons %v)", d.Decision, c.decision, reasonsOf(d))
			}
			want := []string{}
			for _, r := range c.reasons {
				want = append(want, string(r))
			}
			if got := reasonsOf(d); !reflect.DeepEqual(got, want) {
				t.Errorf("blocking reasons = %v, want %v", got, want)
			}
			rw := c.rework
			if rw == nil {
				rw = []int64{}
			}
			if !reflect.DeepEqual(d.ReworkReviewIDs, rw) {
				t.Errorf("rework_review_ids = %v, want %v", d.ReworkReviewIDs, rw)
			}
			if !reflect.DeepEqual(d.MissingCurrentReview, c.missing) {
				t.Errorf("missing_current_review = %v, want %v", d.MissingCurrentReview, c.missing)
			}
			if d.Route != c.route {
				t.Errorf("route = %s, want %s", d.Route, c.route)
			}
		})
	}
}
