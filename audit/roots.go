package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// Whoever can write the database can rewrite an event, the streams' chains
// and the checkpoints that commit to them, all consistently: the database
// alone cannot prove its own history. Each checkpoint's Merkle root is
// therefore also published outside it — appended to a file that the
// operator keeps where the database's writers cannot rewrite it (object
// storage with a retention lock, another machine's log) — and the verifier
// checks the database's checkpoints against the published roots.

// PublishedRoot is one checkpoint's root as published: one JSON line of a
// roots file.
type PublishedRoot struct {
	Checkpoint int64     `json:"checkpoint"`
	Root       string    `json:"root"`
	UptoPos    int64     `json:"upto_pos"`
	Event      string    `json:"event"`
	At         time.Time `json:"at"`
}

// RootFile publishes roots by appending them to a file, one line each,
// flushed to disk before Publish returns.
type RootFile struct {
	Path string
	mu   sync.Mutex
}

// Publish appends c's root.
func (f *RootFile) Publish(_ context.Context, c domain.Checkpoint) error {
	line, err := json.Marshal(PublishedRoot{Checkpoint: c.Seq, Root: c.Root, UptoPos: c.UptoPos, Event: c.EventID, At: c.At.UTC()})
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return err
	}
	if _, err := out.Write(append(line, '\n')); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ReadRoots reads a roots file: the published root of each checkpoint. A
// checkpoint published twice with the same root (two replicas, a retry) is
// one; with two different roots the file itself is refused.
func ReadRoots(r io.Reader) (map[int64]string, error) {
	roots := map[int64]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var p PublishedRoot
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil || p.Checkpoint < 1 || len(p.Root) != 64 {
			return nil, fmt.Errorf("line %d is not a published root (want {\"checkpoint\": N, \"root\": \"<64 hex>\", …})", n)
		}
		if old, ok := roots[p.Checkpoint]; ok && old != p.Root {
			return nil, fmt.Errorf("line %d: checkpoint %d is published twice with different roots (%.16s…, %.16s…)", n, p.Checkpoint, old, p.Root)
		}
		roots[p.Checkpoint] = p.Root
	}
	return roots, sc.Err()
}

// checkPublished compares a checkpoint read from the trail with its
// published root.
func (v *Verifier) checkPublished(c domain.Checkpoint, e domain.AuditEvent, ref int64) {
	if v.Roots == nil {
		return
	}
	if v.seenRoots == nil {
		v.seenRoots = map[int64]bool{}
	}
	v.seenRoots[c.Seq] = true
	if want, ok := v.Roots[c.Seq]; ok && want != c.Root {
		v.add(BreakCheckpoint, e, ref, fmt.Sprintf("checkpoint %d records root %.16s…, but the root published outside the database is %.16s…: "+
			"the checkpoint was rewritten", c.Seq, c.Root, want))
	}
}

// missingPublished reports published checkpoints the trail does not have.
func (v *Verifier) missingPublished() {
	if v.Roots == nil || v.Partial {
		return
	}
	for seq := int64(1); seq <= maxKey(v.Roots); seq++ {
		root, ok := v.Roots[seq]
		switch {
		case !ok || v.seenRoots[seq]:
		case seq > v.lastCP && v.Restored:
			v.laterRoots++
		case seq > v.lastCP:
			v.addAt(BreakCheckpoint, domain.SystemStream, 0, "", 0, fmt.Sprintf(
				"the trail ends at checkpoint %d, but checkpoint %d was published with root %.16s…: its latest history is missing "+
					"(a restore from an earlier backup says so with --restored)", v.lastCP, seq, root))
		default:
			v.addAt(BreakCheckpoint, domain.SystemStream, 0, "", 0, fmt.Sprintf(
				"checkpoint %d was published with root %.16s…, but the trail has no such checkpoint: it was deleted", seq, root))
		}
	}
}

func maxKey(m map[int64]string) int64 {
	var top int64
	for k := range m {
		top = max(top, k)
	}
	return top
}
