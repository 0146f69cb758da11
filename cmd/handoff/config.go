package main

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/opshandoff/handoff/cards"
	"github.com/opshandoff/handoff/domain"
)

// config is the server's configuration, read from HANDOFF_* variables.
type config struct {
	DatabaseURL       string
	Addr              string
	Cards             string // "" for the bundled examples
	SweepInterval     time.Duration
	TrustedProxies    []string
	MaxCausationDepth int
	BodyLimit         int64
	SignIn            signInConfig // signin.go
	// ContentRetention is how long final operations keep their content
	// and result data; zero (the default) keeps them for ever.
	ContentRetention time.Duration
}

func configFromEnv(getenv func(string) string) (config, error) {
	c := config{
		DatabaseURL:       or(getenv("HANDOFF_DATABASE_URL"), "sqlite://handoff.db"),
		Addr:              or(getenv("HANDOFF_ADDR"), "127.0.0.1:8080"),
		Cards:             getenv("HANDOFF_CARDS"),
		SweepInterval:     5 * time.Second,
		MaxCausationDepth: domain.MaxCausationDepth,
		BodyLimit:         256 << 10,
	}
	if v := getenv("HANDOFF_SWEEP_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("HANDOFF_SWEEP_INTERVAL: %q is not a positive duration", v)
		}
		c.SweepInterval = d
	}
	if v := getenv("HANDOFF_TRUSTED_PROXIES"); v != "" {
		for _, p := range strings.Split(v, ",") {
			c.TrustedProxies = append(c.TrustedProxies, strings.TrimSpace(p))
		}
	}
	if v := getenv("HANDOFF_MAX_CAUSATION_DEPTH"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c, fmt.Errorf("HANDOFF_MAX_CAUSATION_DEPTH: %q is not a positive number", v)
		}
		c.MaxCausationDepth = n
	}
	if v := getenv("HANDOFF_CONTENT_RETENTION"); v != "" {
		d, err := time.ParseDuration(v)
		if days, ok := strings.CutSuffix(v, "d"); ok {
			n, nerr := strconv.Atoi(days)
			d, err = time.Duration(n)*24*time.Hour, nerr
		}
		if err != nil || d <= 0 {
			return c, fmt.Errorf("HANDOFF_CONTENT_RETENTION: %q is not a positive duration such as 12h or 90d", v)
		}
		c.ContentRetention = d
	}
	var err error
	c.SignIn, err = signInFromEnv(getenv, c.Addr)
	return c, err
}

// loadCards reads the configured operation types, or the bundled examples.
func (c config) loadCards() (domain.Cards, error) {
	if c.Cards == "" {
		return cards.Examples()
	}
	return cards.Load(c.Cards)
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// redact hides a password in a database URL before it is printed.
func redact(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil || u.User == nil {
		return dbURL
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
