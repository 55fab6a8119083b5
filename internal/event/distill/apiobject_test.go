package distill

// The per-object entry points below are what the tests drive a REST object through; production
// code does not call them.

// issueComment distils a REST issue comment as an issue_comment event.
func issueComment(forge Forge, action string, object []byte, opts Options) ([]byte, Report) {
	return fromAPIObject(forge, "issue_comment", action, object, opts)
}

// reviewComment distils a REST pull request review comment as a pull_request_review_comment
// event.
func reviewComment(forge Forge, action string, object []byte, opts Options) ([]byte, Report) {
	return fromAPIObject(forge, "pull_request_review_comment", action, object, opts)
}

// Review distils a REST pull request review as a pull_request_review event.
func Review(forge Forge, action string, object []byte, opts Options) ([]byte, Report) {
	return fromAPIObject(forge, "pull_request_review", action, object, opts)
}
