package reviewrun

import "github.com/forgectx/forgectx/pkg/harness"

func harnessWith(env, secrets []string) *harness.Harness {
	return &harness.Harness{Agent: harness.Agent{Env: env}, Secrets: secrets}
}
