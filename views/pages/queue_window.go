package pages

// refreshLine reports whether the results begin with the queue's refresh
// line ("Updated …"), which then carries the list's total.
func (v QueueView) refreshLine() bool { return !v.All && v.Self != "" && !v.Updated.IsZero() }
