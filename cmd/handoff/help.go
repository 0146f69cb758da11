package main

import "strings"

// wantsHelp reports whether a subcommand's arguments ask for help anywhere
// (`handoff token create --help` as well as `handoff serve -h`).
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help", "help":
			return true
		}
	}
	return false
}

// usageOf is the part of the usage that describes cmd: each line naming
// `handoff CMD` and the lines indented under it; the whole usage when no
// line names it.
func usageOf(cmd string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(usage, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "handoff "):
			fields := strings.Fields(strings.NewReplacer("[", "", "]", "").Replace(trimmed))
			in = len(fields) > 1 && fields[1] == cmd
		case trimmed == "":
			in = false
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	if b.Len() == 0 {
		return usage
	}
	return "usage:\n" + b.String()
}
