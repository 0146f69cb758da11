# The goal's lines over the rounds of scripts/bench-rounds, judged by the
# median rule: a line holds when the median of its rounds meets it and no
# round falls more than 15% short of it (a ratio that must be at least T:
# every round at least 0.85·T; at most T: every round at most 1.15·T). On a
# shared machine one slow round says more about the hour than the code, so
# the median carries the line and the floor keeps a bad round visible.
#
# Input: a line per round and client count — the clients, then the ratios
# the round's "ratios:" line prints (from the unrounded figures):
# two-call/DBOS, three-call/DBOS, two-call/River, and two-call/River of
# PostgreSQL's CPU and of WAL.
# Output: a Markdown table, per line and client count: the median, the
# least favourable round, the rounds, and "holds" or "does not hold".
#
#   awk -f scripts/bench-goals.awk GOALS
function add(id, c, v,   k) { k = id SUBSEP c; vals[k] = vals[k] (vals[k] == "" ? "" : " ") v; has[id, c] = 1 }
function target(id, c) {
  if (id == 1) return 1.5                      # two-call / DBOS
  if (id == 2) return 1.0                      # three-call / DBOS
  if (id == 3) return c >= 16 ? 1.0 : 0.7      # two-call / River
  if (id == 4) return c >= 16 ? 1.0 : 1.25     # PostgreSQL CPU, two-call / River
  return 1.5                                   # WAL, two-call / River
}
function atmost(id) { return id >= 4 }         # lower is better
function cell(id, c,   k, n, v, i, j, t, med, worst, ok, s) {
  k = id SUBSEP c
  if (!has[id, c]) return "—"
  n = split(vals[k], v, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  t = target(id, c)
  if (atmost(id)) { worst = v[n]; ok = med <= t && worst <= t * 1.15 }
  else { worst = v[1]; ok = med >= t && worst >= t * 0.85 }
  s = ""
  for (i = 1; i <= n; i++) s = s (i > 1 ? ", " : "") sprintf("%.2f", v[i])
  return sprintf("%s: median %.2f, %s %.2f (%s)", ok ? "holds" : "does not hold", med, atmost(id) ? "max" : "min", worst, s)
}
{ c = $1 + 0; cs[c] = 1; for (id = 1; id <= 5; id++) add(id, c, $(id + 1) + 0) }
END {
  name[1] = "two-call ≥ 1.5× DBOS"; name[2] = "three-call ≥ 1.0× DBOS"
  name[3] = "two-call ≥ 0.7× River at 8 clients, ≥ 1.0× at 16"
  name[4] = "PostgreSQL CPU per two-call ≤ 1.25× River's at 8, ≤ 1.0× at 16"
  name[5] = "WAL per two-call ≤ 1.5× River's"
  print "| line | 8 clients | 16 clients |"; print "|---|---|---|"
  for (id = 1; id <= 5; id++) print "| " name[id] " | " cell(id, 8) " | " cell(id, 16) " |"
}
