package forge

import "io"

// CountBody wraps a response body so that add is called with the size of every read as it
// happens: response_bytes counts the bytes actually read, because chunked answers (Gitea
// streams its JSON lists) announce no Content-Length. It is the statistics' byte counter of
// every forge's transport.
func CountBody(body io.ReadCloser, add func(n int64)) io.ReadCloser {
	if body == nil {
		return nil
	}
	return &countedBody{ReadCloser: body, add: add}
}

type countedBody struct {
	io.ReadCloser
	add func(int64)
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.add(int64(n))
	}
	return n, err
}
