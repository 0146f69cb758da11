package main

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/notify"
)

// checkSigning refuses to start with a destination whose deliveries would
// go unsigned without the card saying so — a receiver could not tell them
// from a forger's — or whose secret cannot sign; a destination that says
// unsigned: true starts with a warning. It also refuses a destination the
// default (HANDOFF_NOTIFY_URL) gave a card whose notify_include_data would
// send it hidden content, which cards check cannot see.
func checkSigning(cs domain.Cards, getenv func(string) string, log *slog.Logger) error {
	var errs []error
	for _, c := range cs.Sorted() {
		for field, d := range destinationFields(c) {
			name := fmt.Sprintf("operation type %q: %s (%s)", c.Name, field, d.URL)
			if c.SendsHiddenContent(d) {
				errs = append(errs, fmt.Errorf("%s: notify_include_data would send it content that content_visible_to: %s hides",
					name, c.ContentVisibleTo))
			}
			switch {
			case d.Unsigned:
				log.Warn("notifications are sent unsigned: a receiver cannot tell them from a forger's", "type", c.Name,
					"destination", field, "url", d.URL)
			case d.SecretEnv != "":
				secret := getenv(d.SecretEnv)
				if secret == "" {
					errs = append(errs, fmt.Errorf("%s is signed with %s, which is not set; set it, or mark the destination unsigned: true%s",
						name, d.SecretEnv, unsignedHint(d)))
				} else if err := notify.CheckSecret(secret); err != nil {
					errs = append(errs, fmt.Errorf("%s: %s: %w", name, d.SecretEnv, err))
				}
			case d.MustSign():
				errs = append(errs, fmt.Errorf("%s has no secret_env; name the variable holding its signing secret, or mark it unsigned: true", name))
			}
		}
	}
	return errors.Join(errs...)
}

// destinationFields names each of the card's destinations as its card does.
func destinationFields(c domain.Card) map[string]domain.Destination {
	out := map[string]domain.Destination{}
	if len(c.Notify) == 0 && c.NotifyURL != "" {
		out["notify_url"] = c.Destinations()[0]
	}
	for i, d := range c.Notify {
		out[fmt.Sprintf("notify[%d]", i)] = d
	}
	for i, d := range c.Escalate {
		out[fmt.Sprintf("escalate[%d]", i)] = d
	}
	return out
}

// unsignedHint says how to mark the default destination unsigned, which no
// card lists.
func unsignedHint(d domain.Destination) string {
	if d.SecretEnv == domain.DefaultNotifySecretEnv {
		return " (HANDOFF_NOTIFY_UNSIGNED=true for HANDOFF_NOTIFY_URL; a notify list instead of notify_url)"
	}
	return ""
}
