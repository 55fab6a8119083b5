package giteaserver

import "testing"

// The helper's own contract: a started server answers as the admin it created, a user made
// through it can authenticate with its token, and a restart keeps the data.
func TestStartCreateRestart(t *testing.T) {
	s := Start(t, Config{})
	u := s.CreateUser(t, "smoke")
	var me struct {
		Login   string `json:"login"`
		IsAdmin bool   `json:"is_admin"`
	}
	s.MustDo(t, u.Token, "", "GET", "/user", nil, &me)
	if me.Login != "smoke" || me.IsAdmin {
		t.Fatalf("GET /user as smoke = %+v", me)
	}
	s.Restart(t, Config{MaxResponseItems: 2})
	s.MustDo(t, s.Admin.Token, "", "GET", "/user", nil, &me)
	if me.Login != s.Admin.Login || !me.IsAdmin {
		t.Fatalf("GET /user as admin after restart = %+v", me)
	}
}
