package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

// auditCmd exports the audit trail and verifies an export or the database.
func auditCmd(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "export":
			return auditExport(ctx, cfg, args[1:], stdout, stderr)
		case "verify":
			return auditVerify(ctx, cfg, args[1:], stdout)
		}
	}
	return fmt.Errorf("audit: want export or verify")
}

// cliActor is who the command line acts as: whoever holds the database
// URL, named by the operating system's user.
func cliActor() domain.Actor {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return domain.Actor{Kind: domain.ActorSystem, Name: "cli:" + name}
}

// auditExport streams the trail to a file (written beside it, then renamed
// into place, so a half-written export never passes for a whole one) or to
// standard output.
func auditExport(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	req, out, err := parseAuditExport(args)
	if err != nil {
		return err
	}
	s, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer s.Close()
	dest, err := createExport(out, stdout)
	if err != nil {
		return err
	}
	defer dest.discard()
	sink, err := audit.NewEncoder(dest.w, req.Format)
	if err != nil {
		return err
	}
	counted := &countingSink{Sink: sink}
	start := time.Now()
	if err := audit.NewTrail(s).Export(ctx, cliActor(), req, counted); err != nil {
		return err
	}
	name, err := dest.commit()
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Fprintf(stderr, "exported %d audit events as %s to %s in %s (%.0f events/s)\n", counted.n, req.Format, name,
		took.Round(time.Millisecond), float64(counted.n)/took.Seconds())
	return nil
}

// parseAuditExport reads `handoff audit export`'s flags: the export asked
// for, and the file to write ("" for standard output).
func parseAuditExport(args []string) (audit.Export, string, error) {
	fs := flag.NewFlagSet("audit export", flag.ContinueOnError)
	format := fs.String("format", audit.FormatJSONL, "jsonl or csv")
	from := fs.String("from", "", "RFC 3339: events at or after")
	to := fs.String("to", "", "RFC 3339: events before")
	ns := fs.String("namespace", "", "one namespace's operations (and the system stream)")
	out := fs.String("o", "", "the file to write; standard output if empty")
	if err := fs.Parse(args); err != nil {
		return audit.Export{}, "", err
	}
	req := audit.Export{Format: *format}
	req.Query.Namespace = *ns
	var err error
	if req.Query.From, err = flagTime("from", *from); err != nil {
		return audit.Export{}, "", err
	}
	if req.Query.To, err = flagTime("to", *to); err != nil {
		return audit.Export{}, "", err
	}
	return req, *out, nil
}

// exportFile is where an export goes: path.partial until commit renames
// it to path, or standard output when path is "".
type exportFile struct {
	w    io.Writer
	f    *os.File
	path string
}

// createExport opens the export's destination.
func createExport(path string, stdout io.Writer) (*exportFile, error) {
	if path == "" {
		return &exportFile{w: stdout}, nil
	}
	f, err := os.Create(path + ".partial")
	if err != nil {
		return nil, err
	}
	return &exportFile{w: f, f: f, path: path}, nil
}

// commit closes the file and renames it into place; it returns the name
// the export was written to.
func (e *exportFile) commit() (string, error) {
	if e.f == nil {
		return "standard output", nil
	}
	if err := e.f.Close(); err != nil {
		return "", err
	}
	return e.path, os.Rename(e.path+".partial", e.path)
}

// discard closes the file and removes what is left of it: nothing once
// commit renamed it.
func (e *exportFile) discard() {
	if e.f == nil {
		return
	}
	e.f.Close()
	os.Remove(e.path + ".partial")
}

type countingSink struct {
	audit.Sink
	n int64
}

func (c *countingSink) Write(e domain.AuditEvent) error { c.n++; return c.Sink.Write(e) }

func flagTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s: %q is not an RFC 3339 time such as 2026-01-31T14:00:00Z", name, v)
	}
	return t.UTC(), nil
}

// auditVerify checks an export file offline, or the database.
func auditVerify(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	db := fs.Bool("db", false, "verify the database (HANDOFF_DATABASE_URL) instead of a file")
	partial := fs.Bool("partial", false, "the file is an export filtered by time or namespace")
	rootsFile := fs.String("roots", "", "check the checkpoints against the roots published to this file (HANDOFF_AUDIT_ROOTS_FILE)")
	restored := fs.Bool("restored", false, "with --roots: the database was restored from a backup, so roots published after it are expected to be missing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	roots, err := readRootsFile(*rootsFile)
	if err != nil {
		return err
	}
	if *db {
		if fs.NArg() != 0 {
			return errors.New("audit verify --db takes no file")
		}
		return verifyDatabase(ctx, cfg, &audit.Verifier{Roots: roots, Restored: *restored}, stdout)
	}
	if fs.NArg() != 1 {
		return errors.New("usage: handoff audit verify [--partial] [--roots ROOTS] FILE | handoff audit verify --db [--roots ROOTS]")
	}
	return verifyFile(fs.Arg(0), &audit.Verifier{Partial: *partial, RefName: "line", Roots: roots, Restored: *restored}, stdout)
}

// readRootsFile reads the published checkpoint roots; none when path is "".
func readRootsFile(path string) (map[int64]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	roots, err := audit.ReadRoots(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("--roots %s: %w", path, err)
	}
	return roots, nil
}

// verifyDatabase verifies the trail in the database and prints the report.
func verifyDatabase(ctx context.Context, cfg config, v *audit.Verifier, stdout io.Writer) error {
	s, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := audit.NewTrail(s).VerifyDB(ctx, v)
	if err != nil {
		return err
	}
	return printReport(stdout, "the database", rep)
}

// verifyFile verifies an export file, read as many times as the verifier
// asks, and prints the report.
func verifyFile(path string, v *audit.Verifier, stdout io.Writer) error {
	each := func(fn func(domain.AuditEvent, int64) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = audit.DecodeExport(f, fn)
		return err
	}
	rep, err := audit.VerifyEvents(v, each, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return printReport(stdout, path, rep)
}

// maxPrinted bounds the breaks listed; the first is the one that matters.
const maxPrinted = 20

func printReport(w io.Writer, what string, rep audit.Report) error {
	summary := fmt.Sprintf("%s: %d events in %d streams, %d checkpoints", what, rep.Events, rep.Streams, rep.Checkpoints)
	if rep.OK() {
		fmt.Fprintf(w, "ok  %s; every chain, sequence and checkpoint verifies\n", summary)
		if rep.LaterRoots > 0 {
			fmt.Fprintf(w, "    %d checkpoints published after the trail's last one are not in it: the history since the backup\n", rep.LaterRoots)
		}
		return nil
	}
	fmt.Fprintf(w, "BROKEN  %s\n", summary)
	for i, b := range rep.Breaks {
		if i == maxPrinted {
			break
		}
		fmt.Fprintf(w, "  %s\n", b)
	}
	if more := len(rep.Breaks) - maxPrinted + rep.Omitted; more > 0 {
		fmt.Fprintf(w, "  … and %d more\n", more)
	}
	first := rep.Breaks[0]
	return fmt.Errorf("the audit trail does not verify: it first breaks at %s, stream %s seq %d (%s)",
		first.Where, first.Stream, first.Seq, first.Kind)
}
