package storetest

import (
	"context"
	"strings"

	"github.com/opshandoff/handoff/domain"
)

// Checkpoints wraps an audit store for tests of audit checkpoints: a
// checkpoint that gave up waiting for older transactions to end is written
// again, as the checkpointer's next tick would write it.
//
// On PostgreSQL a checkpoint waits, for a bounded time, until every
// transaction older than its own has ended — every transaction of the
// cluster, those of other tests and other test processes included. On a
// loaded machine one of those can outlast the bound; the checkpoint then
// answers Unavailable and writes nothing, which is the store's contract,
// not the failure a test looks for. What the tests assert is what the
// written checkpoint covers.
func Checkpoints(s domain.AuditStore) domain.AuditStore { return patient{s} }

// checkpointAttempts bounds the retries, so that a checkpoint that can
// never settle still fails its test.
const checkpointAttempts = 30

type patient struct{ domain.AuditStore }

func (p patient) WriteCheckpoint(ctx context.Context, maxHeads int,
	build func(domain.Checkpoint, []domain.StreamHead, int64) (domain.Checkpoint, domain.AuditEvent)) (domain.Checkpoint, bool, error) {
	for attempt := 1; ; attempt++ {
		c, wrote, err := p.AuditStore.WriteCheckpoint(ctx, maxHeads, build)
		if !gaveUpWaiting(err) || ctx.Err() != nil || attempt == checkpointAttempts {
			return c, wrote, err
		}
	}
}

// gaveUpWaiting reports whether err is the checkpoint's bounded wait for
// older transactions running out.
func gaveUpWaiting(err error) bool {
	return err != nil && domain.ErrorCode(err) == domain.EUnavailable &&
		strings.Contains(err.Error(), "the audit checkpoint waits for it")
}
