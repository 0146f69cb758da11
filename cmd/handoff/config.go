package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/opshandoff/handoff/auth"
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
	Notify            notifyConfig
	ShutdownTimeout   time.Duration
	TokenCache        time.Duration // how long a verified API token is trusted; 0: not cached
	DBWriters         int           // group-commit flushes in flight on PostgreSQL; 0: one per core (store.Writers)
	LogFormat         string        // "text" or "json"
	// ContentRetention is how long final operations keep their content
	// and result data; zero (the default) keeps them for ever.
	ContentRetention time.Duration
	// KeyPII is what identifiers holding personal data get (HANDOFF_KEY_PII).
	KeyPII domain.PIIGuard
	// Pprof is the loopback address of Go's runtime profiles
	// (HANDOFF_PPROF); "" (the default) serves none.
	Pprof string
}

// notifyConfig is where and how notifications are delivered.
type notifyConfig struct {
	URL          string        // HANDOFF_NOTIFY_URL: the destination of types without their own
	Unsigned     bool          // HANDOFF_NOTIFY_UNSIGNED: URL's deliveries go unsigned, as it means them to
	AllowPrivate bool          // HANDOFF_NOTIFY_ALLOW_PRIVATE: let notifications reach private addresses
	MaxAge       time.Duration // HANDOFF_NOTIFY_MAX_AGE: how long a notification is retried
	Timeout      time.Duration // HANDOFF_NOTIFY_TIMEOUT: one attempt's bound
}

func notifyFromEnv(getenv func(string) string) (notifyConfig, error) {
	c := notifyConfig{URL: getenv("HANDOFF_NOTIFY_URL"), MaxAge: domain.DefaultDeliveryPolicy.MaxAge, Timeout: 10 * time.Second}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return c, fmt.Errorf("HANDOFF_NOTIFY_URL: %q must be an http(s) URL", c.URL)
		}
	}
	for name, b := range map[string]*bool{"HANDOFF_NOTIFY_ALLOW_PRIVATE": &c.AllowPrivate, "HANDOFF_NOTIFY_UNSIGNED": &c.Unsigned} {
		switch v := getenv(name); v {
		case "", "false":
		case "true":
			*b = true
		default:
			return c, fmt.Errorf("%s: %q must be true or false", name, v)
		}
	}
	if c.Unsigned && getenv(domain.DefaultNotifySecretEnv) != "" {
		return c, fmt.Errorf("HANDOFF_NOTIFY_UNSIGNED: true, with %s set: choose one", domain.DefaultNotifySecretEnv)
	}
	for name, d := range map[string]*time.Duration{"HANDOFF_NOTIFY_MAX_AGE": &c.MaxAge, "HANDOFF_NOTIFY_TIMEOUT": &c.Timeout} {
		if v := getenv(name); v != "" {
			p, err := time.ParseDuration(v)
			if err != nil || p <= 0 {
				return c, fmt.Errorf("%s: %q is not a positive duration", name, v)
			}
			*d = p
		}
	}
	return c, nil
}

func configFromEnv(getenv func(string) string) (config, error) {
	c := config{
		DatabaseURL:       orDefault(getenv("HANDOFF_DATABASE_URL"), "sqlite://handoff.db"),
		Addr:              orDefault(getenv("HANDOFF_ADDR"), "127.0.0.1:8080"),
		Cards:             getenv("HANDOFF_CARDS"),
		SweepInterval:     5 * time.Second,
		MaxCausationDepth: domain.MaxCausationDepth,
		BodyLimit:         256 << 10,
		ShutdownTimeout:   20 * time.Second,
		TokenCache:        auth.DefaultTokenCacheTTL,
		LogFormat:         orDefault(getenv("HANDOFF_LOG_FORMAT"), "text"),
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c, fmt.Errorf("HANDOFF_LOG_FORMAT: %q is neither text nor json", c.LogFormat)
	}
	if v := getenv("HANDOFF_SHUTDOWN_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("HANDOFF_SHUTDOWN_TIMEOUT: %q is not a positive duration", v)
		}
		c.ShutdownTimeout = d
	}
	if v := getenv("HANDOFF_DB_WRITERS"); v != "" {
		// 64 is far beyond any database's cores: more flushes at once
		// than that would only wait for connections and locks.
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			return c, fmt.Errorf("HANDOFF_DB_WRITERS: %q is not a number from 1 to 64", v)
		}
		c.DBWriters = n
	}
	if v := getenv("HANDOFF_TOKEN_CACHE"); v != "" {
		// At most the default: a revocation reaches other replicas through
		// LISTEN at once, and through nothing else.
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > auth.DefaultTokenCacheTTL {
			return c, fmt.Errorf("HANDOFF_TOKEN_CACHE: %q is not a duration from 0 to %s", v, auth.DefaultTokenCacheTTL)
		}
		c.TokenCache = d
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
		d, ok := parseDays(v)
		if !ok {
			return c, fmt.Errorf("HANDOFF_CONTENT_RETENTION: %q is not a positive duration such as 12h or 90d", v)
		}
		c.ContentRetention = d
	}
	var err error
	if v := getenv("HANDOFF_KEY_PII"); v != "" {
		if c.KeyPII, err = domain.ParsePIIGuard(v); err != nil {
			return c, fmt.Errorf("HANDOFF_KEY_PII: %q is not refuse, warn or off", v)
		}
	}
	if c.Pprof = getenv("HANDOFF_PPROF"); c.Pprof != "" {
		if err := checkPprofAddr(c.Pprof); err != nil {
			return c, err
		}
	}
	if c.Notify, err = notifyFromEnv(getenv); err != nil {
		return c, err
	}
	c.SignIn, err = signInFromEnv(getenv, c.Addr)
	return c, err
}

// loadCards reads the configured operation types, or the bundled examples.
func (c config) loadCards() (domain.Cards, error) {
	var cs domain.Cards
	var err error
	if c.Cards == "" {
		cs, err = cards.Examples()
	} else {
		cs, err = cards.Load(c.Cards)
	}
	if err != nil {
		return nil, err
	}
	d := domain.Destination{URL: c.Notify.URL, SecretEnv: domain.DefaultNotifySecretEnv, Format: domain.FormatStandard}
	if c.Notify.Unsigned {
		d.SecretEnv, d.Unsigned = "", true
	}
	return cs.WithDefaultDestination(d), nil
}

// logger writes the process's log records as text or as JSON lines.
func (c config) logger(w io.Writer) *slog.Logger {
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// orDefault is v, or def when v is empty.
func orDefault(v, def string) string {
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
