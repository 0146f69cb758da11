package domain

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
)

// A hash chain alone cannot tell a stream that ends at seq 3 from one whose
// seq 4 was deleted, nor notice a stream that vanished entirely. Checkpoints
// close that hole: each one is a system event that commits to the head
// (stream, seq, hash) of every operation stream that changed since the
// previous checkpoint, with a Merkle root over them that can be published
// outside the database. The system stream itself needs no head: each
// checkpoint is chained onto it, so it commits to the whole stream before it.

// The actions of the audit trail's own system events.
const (
	ActionCheckpoint    = "checkpoint"
	ActionStreamPurged  = "stream_purged"
	ActionAuditExported = "audit_exported"
)

// MaxCheckpointHeads bounds the heads one checkpoint event carries, so the
// event stays small enough for a spreadsheet cell (32,767 characters) in a
// CSV export; a busier interval is covered by several checkpoints in a row.
const MaxCheckpointHeads = 200

// StreamHead is a stream's last event as some record saw it.
type StreamHead struct {
	Stream string
	Seq    int64
	Hash   string
}

// Checkpoint commits to the heads of the streams that changed in the write
// positions (previous UptoPos, UptoPos]. Seq numbers checkpoints from 1
// without gaps.
type Checkpoint struct {
	Seq     int64
	UptoPos int64
	Root    string
	Heads   []StreamHead // sorted by stream
	EventID string
	At      time.Time
}

// NewCheckpoint is the checkpoint after prev that commits to heads.
func NewCheckpoint(prev Checkpoint, heads []StreamHead, uptoPos int64) Checkpoint {
	hs := slices.Clone(heads)
	slices.SortFunc(hs, func(a, b StreamHead) int { return strings.Compare(a.Stream, b.Stream) })
	return Checkpoint{Seq: prev.Seq + 1, UptoPos: uptoPos, Root: MerkleRoot(hs), Heads: hs}
}

// checkpointActor signs checkpoint and retention events.
var checkpointActor = Actor{Kind: ActorSystem, Name: "audit"}

// CheckpointEvent is the system event that records c.
func CheckpointEvent(ctx context.Context, ids *IDSource, now time.Time, c Checkpoint) AuditEvent {
	heads := make([]headTuple, len(c.Heads))
	for i, h := range c.Heads {
		heads[i] = headTuple(h)
	}
	return SystemEvent(ctx, ids, now, checkpointActor, ActionCheckpoint, "",
		map[string]any{"checkpoint": c.Seq, "upto_pos": c.UptoPos, "root": c.Root, "heads": heads})
}

type checkpointDetail struct {
	Checkpoint int64       `json:"checkpoint"`
	UptoPos    int64       `json:"upto_pos"`
	Root       string      `json:"root"`
	Heads      []headTuple `json:"heads"`
}

// headTuple is a head as a compact JSON array [stream, seq, hash].
type headTuple StreamHead

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
func ParseCheckpoint(e AuditEvent) (Checkpoint, error) {
	var d checkpointDetail
	if e.Action != ActionCheckpoint || e.Stream != SystemStream {
		return Checkpoint{}, fmt.Errorf("event %s is not a checkpoint", e.ID)
	}
	if err := json.Unmarshal(e.Detail, &d); err != nil || d.Checkpoint < 1 {
		return Checkpoint{}, fmt.Errorf("checkpoint event %s has an unreadable detail", e.ID)
	}
	c := Checkpoint{Seq: d.Checkpoint, UptoPos: d.UptoPos, Root: d.Root, EventID: e.ID, At: e.At}
	for _, h := range d.Heads {
		c.Heads = append(c.Heads, StreamHead(h))
	}
	return c, nil
}

// MerkleRoot is the RFC 6962 Merkle tree hash over the heads in order, hex
// encoded. A leaf is "stream NUL seq NUL hash"; 0x00 prefixes leaves and
// 0x01 inner nodes, so that no leaf can pose as a node.
func MerkleRoot(heads []StreamHead) string {
	if len(heads) == 0 {
		sum := sha256.Sum256(nil)
		return hex.EncodeToString(sum[:])
	}
	sum := merkle(heads)
	return hex.EncodeToString(sum[:])
}

func merkle(heads []StreamHead) [32]byte {
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

// PurgeCandidate is an operation whose stream retention may remove.
type PurgeCandidate struct {
	Head      StreamHead // the operation's version and audit head
	State     State
	UpdatedAt time.Time
}

// MayPurge reports whether retention allows removing the candidate's stream
// at now. A zero retention keeps everything: purging is never the default.
func MayPurge(c PurgeCandidate, retention time.Duration, now time.Time) bool {
	return retention > 0 && c.State.Final() && c.Head.Seq > 0 && !c.UpdatedAt.After(now.Add(-retention))
}

// TombstoneEvent is the system event that stands for a purged stream.
func TombstoneEvent(ctx context.Context, ids *IDSource, now time.Time, c PurgeCandidate, retention time.Duration) AuditEvent {
	return SystemEvent(ctx, ids, now, checkpointActor, ActionStreamPurged, "retention "+retention.String(),
		map[string]any{"stream": c.Head.Stream, "seq": c.Head.Seq, "hash": c.Head.Hash, "state": c.State.String()})
}

// ParseTombstone reads the head a tombstone event records.
func ParseTombstone(e AuditEvent) (StreamHead, error) {
	var d struct {
		Stream string `json:"stream"`
		Seq    int64  `json:"seq"`
		Hash   string `json:"hash"`
	}
	if err := json.Unmarshal(e.Detail, &d); err != nil || d.Stream == "" {
		return StreamHead{}, fmt.Errorf("tombstone event %s has an unreadable detail", e.ID)
	}
	return StreamHead(d), nil
}
