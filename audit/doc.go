// Package audit is the audit trail as a product: the export formats (JSON
// Lines and CSV), the streaming verifier and its report, checkpoints with
// their Merkle roots, retention's tombstones, and the Trail use cases
// (list, export, verify, checkpoint, purge).
//
// The domain package keeps what a transition needs — the AuditEvent, its
// canonical JSON, HashEvent and sealing — and the vocabulary the store
// speaks (AuditStore, AuditSelect, StreamHead, Checkpoint, PurgeCandidate);
// this package builds on them and imports nothing else of ours.
package audit
