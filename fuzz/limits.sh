# The limits every fuzz run and minimization shares (sourced by run.sh and minimize.sh):
# inputs up to 8 KiB (fast to mutate, small to keep), 64 KiB for containers that need room for
# their directory; a hang is over 1 s, memory past 2 GiB is a finding.
max_len_of() {
  case "$1" in zip|format_inspect|format_trackio) echo 65536 ;; *) echo 8192 ;; esac
}
LIMITS=(-timeout=1 -rss_limit_mb=2048 -malloc_limit_mb=2048)
