-- +goose Up
-- No parallel workers for reads of operations and of the search's side
-- table. Every read of them Handoff makes is bounded — a page, a count to
-- a bound, a key — and takes milliseconds; a parallel plan waits for its
-- workers to start before its first row, which on a host whose cores the
-- write path keeps busy takes longer than the read itself
-- (docs/design/performance-log.md, "Parallel workers"). A storage
-- parameter, not a session setting, so it holds under PgBouncer's
-- transaction pooling and for every connection alike.
ALTER TABLE operations SET (parallel_workers = 0);
ALTER TABLE operation_search SET (parallel_workers = 0);

-- +goose Down
ALTER TABLE operation_search RESET (parallel_workers);
ALTER TABLE operations RESET (parallel_workers);
