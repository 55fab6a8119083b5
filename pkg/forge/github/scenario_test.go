package github_test

import (
	"testing"

	"github.com/forgectx/forgectx/test/ghscenario"
)

func TestSmokeScenarios(t *testing.T) {
	for name, mk := range ghscenario.Small() {
		t.Run(name, func(t *testing.T) {
			s := mk()
			a, st, err := acquireFake(t, s, build(t, s), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: comments=%d reviews=%d threads=%d checks=%d actors=%d outcomes=%+v requests=%d bound=%d", name, len(a.Comments), len(a.Reviews), len(a.Threads), len(a.Checks), len(a.Actors), a.Outcomes, st.Requests, st.LowerBound)
		})
	}
}
