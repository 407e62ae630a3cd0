#!/usr/bin/env python3
"""How often a game review at a small budget gives the classes of a long one.

usage: review_budget.py HTTP_BASE PGN[,PGN...] BUDGETS REF [GAMES_PER_FILE]

Reviews the first GAMES_PER_FILE games of each record file through the HTTP gateway's
AnalyzeGame at REF playouts a turn (two positions at once) and at each of BUDGETS (comma-separated
playouts a turn, one thread), then prints a Markdown table: per budget, the unforced turns whose
class matches the reference's, those flagged (?!, ?, ??) where the reference says best or good,
the reference's flags missed, and the time a game took. Standard library only. The figures are
in docs/STRENGTH.md, "Review budgets".
"""
import json, sys, urllib.request, re, collections, time

base, files, budgets, ref = sys.argv[1], sys.argv[2].split(','), [int(b) for b in sys.argv[3].split(',')], int(sys.argv[4])
per_file = int(sys.argv[5]) if len(sys.argv) > 5 else 3

def records(path):
    text = open(path).read()
    games = re.split(r'\n(?=\[Event )', text.strip())
    return [g.strip() + '\n' for g in games if g.strip()][:per_file]

def review(record, playouts, threads):
    body = json.dumps({"record": record, "perTurn": {"maxPlayouts": str(playouts)},
                       "options": {"threads": threads, "seed": "7"}}).encode()
    req = urllib.request.Request(base + '/v1/AnalyzeGame', data=body, headers={'Content-Type': 'application/json'})
    turns = {}
    event = None
    with urllib.request.urlopen(req, timeout=3600) as r:
        for raw in r:
            line = raw.decode().rstrip('\n')
            if line.startswith('event: '):
                event = line[7:]
            elif line.startswith('data: ') and event == 'turn':
                t = json.loads(line[6:])['turn']
                turns[t['turn']] = t
            elif line.startswith('data: ') and event == 'error':
                raise SystemExit(line)
    return turns

FLAG = {'MOVE_CLASS_INACCURACY', 'MOVE_CLASS_MISTAKE', 'MOVE_CLASS_BLUNDER'}
OK = {'MOVE_CLASS_BEST', 'MOVE_CLASS_GOOD'}
games = [g for f in files for g in records(f)]
stats = {b: collections.Counter() for b in budgets}
for gi, g in enumerate(games):
    t0 = time.time(); refturns = review(g, ref, 2); tr = time.time() - t0
    for b in budgets:
        t0 = time.time(); turns = review(g, b, 1); tb = time.time() - t0
        c = stats[b]
        c['time'] += tb
        for n, rt in refturns.items():
            rc = rt.get('class', 'MOVE_CLASS_UNSPECIFIED')
            if rc == 'MOVE_CLASS_FORCED':
                continue
            bc = turns.get(n, {}).get('class', 'MOVE_CLASS_UNSPECIFIED')
            c['turns'] += 1
            c['same'] += rc == bc
            c['flag_ok'] += (bc in FLAG) == (rc in FLAG)
            c['false_flag'] += bc in FLAG and rc in OK
            c['missed'] += rc in FLAG and bc in OK
            c['ref_flags'] += rc in FLAG
            c['flags'] += bc in FLAG
    print(f'game {gi+1}/{len(games)}: reference {ref} playouts in {tr:.0f} s', flush=True)
print(f'reference: {ref} playouts a turn; {len(games)} games')
print('| playouts a turn | unforced turns | same class | flagged or not as the reference | flagged, reference best/good | missed (reference flags, best/good here) | flags (reference) | time a game |')
print('|---|---|---|---|---|---|---|---|')
for b in budgets:
    c = stats[b]; n = c['turns']
    print(f"| {b:,} | {n} | {100*c['same']/n:.0f}% | {100*c['flag_ok']/n:.0f}% | {c['false_flag']} ({100*c['false_flag']/n:.0f}%) | {c['missed']} | {c['flags']} ({c['ref_flags']}) | {c['time']/len(games):.1f} s |")
