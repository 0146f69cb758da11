package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// A hash chain alone cannot tell a stream that ends at seq 3 from one whose
// seq 4 was deleted, nor notice a stream that vanished entirely. Checkpoints
// close that hole: each one is a system event that commits to the head
// (stream, seq, hash) of every operation stream that changed since the
// previous checkpoint, with a Merkle root over them that can be published
// outside the database. The system stream itself needs no head: each
// checkpoint is chained onto it, so it commits to the whole stream before it.

// MaxCheckpointHeads bounds the heads one checkpoint event carries, so the
// event stays small enough for a spreadsheet cell (32,767 characters) in a
// CSV export; a busier interval is covered by several checkpoints in a row.
const MaxCheckpointHeads = 200

// NewCheckpoint is the checkpoint after prev that commits to heads.
func NewCheckpoint(prev domain.Checkpoint, heads []domain.StreamHead, uptoPos int64) domain.Checkpoint {
	hs := slices.Clone(heads)
	slices.SortFunc(hs, func(a, b domain.StreamHead) int { return strings.Compare(a.Stream, b.Stream) })
	return domain.Checkpoint{Seq: prev.Seq + 1, UptoPos: uptoPos, Root: MerkleRoot(hs), Heads: hs}
}

// checkpointActor signs checkpoint and retention events.
var checkpointActor = domain.Actor{Kind: domain.ActorSystem, Name: "audit"}

// CheckpointEvent is the system event that records c.
func CheckpointEvent(ctx context.Context, ids *domain.IDSource, now time.Time, c domain.Checkpoint) domain.AuditEvent {
	heads := make([]headTuple, len(c.Heads))
	for i, h := range c.Heads {
		heads[i] = headTuple(h)
	}
	return domain.SystemEvent(ctx, ids, now, checkpointActor, domain.ActionCheckpoint, "",
		map[string]any{"checkpoint": c.Seq, "upto_pos": c.UptoPos, "root": c.Root, "heads": heads})
}

type checkpointDetail struct {
	Checkpoint int64       `json:"checkpoint"`
	UptoPos    int64       `json:"upto_pos"`
	Root       string      `json:"root"`
	Heads      []headTuple `json:"heads"`
}

// headTuple is a head as a compact JSON array [stream, seq, hash].
type headTuple domain.StreamHead

func (h headTuple) MarshalJSON() ([]byte, error) { return json.Marshal([]any{h.Stream, h.Seq, h.Hash}) }

func (h *headTuple) UnmarshalJSON(b []byte) error {
	var t []json.RawMessage
	if err := json.Unmarshal(b, &t); err != nil || len(t) != 3 {
		return fmt.Errorf("a head is [stream, seq, hash]")
	}
	if err := json.Unmarshal(t[0], &h.Stream); err != nil {
		return err
	}
	if err := json.Unmarshal(t[1], &h.Seq); err != nil {
		return err
	}
	return json.Unmarshal(t[2], &h.Hash)
}

// ParseCheckpoint reads the checkpoint a checkpoint event records.
func ParseCheckpoint(e domain.AuditEvent) (domain.Checkpoint, error) {
	var d checkpointDetail
	if e.Action != domain.ActionCheckpoint || e.Stream != domain.SystemStream {
		return domain.Checkpoint{}, fmt.Errorf("event %s is not a checkpoint", e.ID)
	}
	if err := json.Unmarshal(e.Detail, &d); err != nil || d.Checkpoint < 1 {
		return domain.Checkpoint{}, fmt.Errorf("checkpoint event %s has an unreadable detail", e.ID)
	}
	c := domain.Checkpoint{Seq: d.Checkpoint, UptoPos: d.UptoPos, Root: d.Root, EventID: e.ID, At: e.At}
	for _, h := range d.Heads {
		c.Heads = append(c.Heads, domain.StreamHead(h))
	}
	return c, nil
}

// MerkleRoot is the RFC 6962 Merkle tree hash over the heads in order, hex
// encoded. A leaf is "stream NUL seq NUL hash"; 0x00 prefixes leaves and
// 0x01 inner nodes, so that no leaf can pose as a node.
func MerkleRoot(heads []domain.StreamHead) string {
	if len(heads) == 0 {
		sum := sha256.Sum256(nil)
		return hex.EncodeToString(sum[:])
	}
	sum := merkle(heads)
	return hex.EncodeToString(sum[:])
}

func merkle(heads []domain.StreamHead) [32]byte {
	if len(heads) == 1 {
		h := heads[0]
		return sha256.Sum256([]byte("\x00" + h.Stream + "\x00" + strconv.FormatInt(h.Seq, 10) + "\x00" + h.Hash))
	}
	k := 1
	for k*2 < len(heads) {
		k *= 2 // the largest power of two below len(heads)
	}
	l, r := merkle(heads[:k]), merkle(heads[k:])
	return sha256.Sum256(append(append([]byte{0x01}, l[:]...), r[:]...))
}

// Retention may remove the events of an operation that is final, but never
// silently: a tombstone in the system stream records the purged stream's
// head, the next checkpoint commits to it, and verification accepts a
// missing stream only when a tombstone accounts for it.

// MayPurge reports whether retention allows removing the candidate's stream
// at now. A zero retention keeps everything: purging is never the default.
func MayPurge(c domain.PurgeCandidate, retention time.Duration, now time.Time) bool {
	return retention > 0 && c.State.Final() && c.Head.Seq > 0 && !c.UpdatedAt.After(now.Add(-retention))
}

// TombstoneEvent is the system event that stands for a purged stream.
func TombstoneEvent(ctx context.Context, ids *domain.IDSource, now time.Time, c domain.PurgeCandidate, retention time.Duration) domain.AuditEvent {
	return domain.SystemEvent(ctx, ids, now, checkpointActor, domain.ActionStreamPurged, "retention "+retention.String(),
		map[string]any{"stream": c.Head.Stream, "seq": c.Head.Seq, "hash": c.Head.Hash, "state": c.State.String()})
}

// ParseTombstone reads the head a tombstone event records.
func ParseTombstone(e domain.AuditEvent) (domain.StreamHead, error) {
	var d struct {
		Stream string `json:"stream"`
		Seq    int64  `json:"seq"`
		Hash   string `json:"hash"`
	}
	if err := json.Unmarshal(e.Detail, &d); err != nil || d.Stream == "" {
		return domain.StreamHead{}, fmt.Errorf("tombstone event %s has an unreadable detail", e.ID)
	}
	return domain.StreamHead(d), nil
}
