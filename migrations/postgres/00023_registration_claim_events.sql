-- +goose Up
-- A registration that claims in the same change writes one audit event,
-- registered_and_claimed or registered_and_began (domain/register.go),
-- where it wrote registered and then claimed or claimed_and_began. Both are
-- machine transitions of the lifecycle, so the partial index of decisions
-- (00016) leaves them out like the rest; store/audit.go spells the same
-- predicate verbatim.
DROP INDEX audit_events_decisions;
CREATE INDEX audit_events_decisions ON audit_events (action, pos)
    WHERE action NOT IN ('registered', 'registered_and_claimed', 'registered_and_began', 'claimed', 'claimed_and_began', 'heartbeat', 'began', 'settled');

-- +goose Down
DROP INDEX audit_events_decisions;
CREATE INDEX audit_events_decisions ON audit_events (action, pos)
    WHERE action NOT IN ('registered', 'claimed', 'claimed_and_began', 'heartbeat', 'began', 'settled');
