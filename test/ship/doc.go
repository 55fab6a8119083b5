// Package ship tests what forgectx ships around its binary (docs/ship.md): the GitHub
// composite action (action.yml), the GitLab CI/CD component (templates/forgectx.yml), the
// container image (Dockerfile), the install script, and the project's own CI definitions.
//
// The tests run the real wrappers: action.yml's scripts under bash as a GitHub runner would,
// the component under gitlab-ci-local with the shell executor, the image under buildah, the
// workflows under actionlint — each against a loopback fake forge or `forgectx demo`, never the
// network. A tool that cannot be installed here makes its test skip with the reason.
package ship
