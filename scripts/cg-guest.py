#!/usr/bin/env python3
"""Self instructions per function of a callgrind profile, the guest's named.

    scripts/cg-guest.py CALLGRIND_FILE [PERF_MAP] [N] [TOP]

callgrind names code without symbols, wazero's compiled guest functions,
by the address it entered them at; wazero's perf map (a perfmap build that
compiled the module, not a cache hit) gives each function's range and wasm
name. Prints self instructions per function divided by N (the commands the
profile ran; default 1), guest functions marked G:, and the guest's total.
The file is read directly: callgrind_annotate mis-sums the profiles of a
Go program whose counts were zeroed mid-run (--zero-before).
"""
import bisect, collections, re, sys

def read_map(path):
    ranges = []
    for line in open(path):
        parts = line.split(' ', 2)
        if len(parts) == 3:
            ranges.append((int(parts[0], 16), int(parts[1], 16), parts[2].strip()))
    ranges.sort()
    return ranges

def self_costs(path):
    names, costs = {}, collections.Counter()
    fn, skip, total = None, False, 0
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        if not line:
            continue
        c = line[0]
        if line.startswith('fn='):
            m = re.match(r'fn=\((\d+)\)(?: (.*))?', line)
            if m:
                if m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
                fn = names.get(m.group(1), m.group(1))
            else:
                fn = line[3:]
            continue
        if line.startswith('calls='):
            skip = True
            continue
        if c.isdigit() or c in '+-*':
            if skip:
                skip = False
                continue
            parts = line.split()
            if len(parts) >= 2 and fn is not None:
                v = int(parts[1])
                costs[fn] += v
                total += v
            continue
        if line.startswith(('cfn=', 'cfi=', 'cfl=', 'cob=')):
            # compressed names defined in cfn= lines are functions too
            m = re.match(r'cfn=\((\d+)\) (.*)', line)
            if m:
                names[m.group(1)] = m.group(2)
    return costs, total

def main():
    cg = sys.argv[1]
    pmap = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != '-' else None
    n = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    ranges = read_map(pmap) if pmap else []
    starts = [r[0] for r in ranges]
    costs, total = self_costs(cg)
    named = collections.Counter()
    for name, cost in costs.items():
        a = re.match(r'0x([0-9a-f]+)$', name)
        if a and ranges:
            addr = int(a.group(1), 16)
            i = bisect.bisect_right(starts, addr) - 1
            if i >= 0 and addr < ranges[i][0] + ranges[i][1]:
                nm = re.sub(r'^\[\d+/\d+\]\.?', '', ranges[i][2])
                name = 'G:' + re.sub(r':::::.*', '', nm)
        named[name] += cost
    guest = sum(c for k, c in named.items() if k.startswith('G:'))
    print('total %.0f  guest %.0f  (self instructions per command, N=%g)' % (total / n, guest / n, n))
    for name, c in named.most_common(top):
        print('%8.0f  %s' % (c / n, name))

main()
