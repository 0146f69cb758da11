package main

import (
	"net/http"
	"net/url"
)

// hstsMaxAge is a year, the minimum browsers' preload lists accept.
const hstsMaxAge = "max-age=31536000"

// withHSTS tells browsers to reach Handoff only over https, on every
// response — API, desk, probes, static files — when the public URL is
// https. Over plain http (loopback development) the header would be
// ignored by browsers and only mislead, so it is not sent.
func withHSTS(h http.Handler, publicURL string) http.Handler {
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme != "https" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", hstsMaxAge)
		h.ServeHTTP(w, r)
	})
}
