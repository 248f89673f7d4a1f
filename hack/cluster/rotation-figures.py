#!/usr/bin/env python3
"""The figures of hack/test-cluster's rotation check, from the manager's JSON log and its request
counts: when the certificates changed; for each CA rotation, how many certificate passes ran while
the new CA waited to be trusted and the most requests a second the manager sent meanwhile; and the
most requests a second from the first renewal on, and on average. Fails (exit 1) if no serving certificate was
renewed, no CA rotated, or a figure is above its bound.

usage: rotation-figures.py MANAGER.log REQUESTS MAX_PASSES_PER_SECOND MAX_REQUESTS_PER_SECOND
REQUESTS: "<epoch ms> <rest_client_requests_total>" lines, one a second.
"""

import json
import sys
from datetime import datetime

CHANGE = "webhook certificates: "
WAITING = "a new webhook CA waits until"
NEW_CA = "made a new CA"
NEW_CERT = "made a new serving certificate"


def log_lines(path):
    """(epoch seconds, message) of every JSON line of the log."""
    for line in open(path):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        at = datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")).timestamp()
        yield at, entry.get("fields", {}).get("message", "")


def request_rates(path):
    """(second's end in epoch seconds, requests in that second) from the cumulative counts."""
    samples = []
    for line in open(path):
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            samples.append((int(parts[0]) / 1000, int(parts[1])))
    return [(t1, (c1 - c0) / (t1 - t0)) for (t0, c0), (t1, c1) in zip(samples, samples[1:]) if t1 > t0]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    log, requests = sys.argv[1], sys.argv[2]
    max_passes, max_requests = float(sys.argv[3]), float(sys.argv[4])
    lines = list(log_lines(log))
    if not lines:
        sys.exit("rotation-figures.py: the manager logged nothing")
    start = lines[0][0]
    changes = [(at, message[len(CHANGE):]) for at, message in lines if message.startswith(CHANGE)]
    for at, change in changes:
        print(f"    {'certificates at %5.1fs' % (at - start):40} {change}")
    problems = []
    new_cas = [at for at, change in changes if change.startswith(NEW_CA)]
    rotated = [at for at in new_cas if at > new_cas[0]] if new_cas else []
    renewed = [at for at, change in changes if change.startswith(NEW_CERT)]
    if not rotated:
        problems.append("no CA rotation (a second new CA) in the log")
    if len(renewed) < 2:
        problems.append("the serving certificate was not renewed")

    waits = [at for at, message in lines if message.startswith(WAITING)]
    rates = request_rates(requests)
    if not rates:
        problems.append("no request counts")
    # Each trust wait: from a CA rotation to the serving certificate the new CA signs.
    windows = [(at, next((r for r in renewed if r > at), lines[-1][0])) for at in rotated]
    for number, (begin, end) in enumerate(windows, 1):
        passes = [w for w in waits if begin <= w <= end]
        busiest = max((sum(1 for w in passes if t <= w < t + 1) for t in passes), default=0)
        waiting = [r for t, r in rates if begin < t <= end + 1]
        span = max(end - begin, 1.0)
        label = f"trust wait {number}"
        print(f"    {label:40} {begin - start:.1f}s to {end - start:.1f}s: {len(passes)} passes ({len(passes) / span:.1f}/s, at most {busiest} in a second; bound {max_passes:g}), "
              f"{max(waiting, default=0):.1f} requests/s at most")
        if busiest > max_passes:
            problems.append(f"{busiest} certificate passes in one second during {label} (bound {max_passes:g})")
    if rotated and not waits:
        problems.append("no pass waited for a new CA to be trusted")
    if rates:
        first = changes[2][0] if len(changes) > 2 else start
        during = [r for t, r in rates if t >= first]
        peak = max(during, default=0)
        print(f"    {'requests/s to the API server':40} at most {peak:.1f} in a second from the first renewal on (bound {max_requests:g}), {sum(r for _, r in rates) / len(rates):.1f} on average over {len(rates)}s")
        if peak > max_requests:
            problems.append(f"{peak:.0f} requests in one second during the rotations (bound {max_requests:g})")
    for problem in problems:
        print(f"  FAILED: {problem}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
