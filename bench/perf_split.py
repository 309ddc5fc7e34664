#!/usr/bin/env python3
"""Splits a perf profile of a check by where the CPU went (docs/STEP_CACHE.md).

Reads `perf script -F comm,pid,ip,sym,dso` of a `perf record -g` run of an
`erl +JPperf true` VM on stdin and classifies each sample by its leaf frame
(and whether the NIF library is on the call chain); the first matching rule
wins.  beam.smp is stripped of its static functions, so part of the VM's own
time shows as unresolved addresses ("VM internals, unresolved")."""
import collections
import re
import sys


def classify(frames):
    sym, dso = frames[0]
    in_nif = any('mce_nif.so' in d for _, d in frames)
    if 'kernel' in dso or dso == '[vdso]':
        return 'kernel'
    if 'mce_nif.so' in dso or 'xxhash' in dso:
        return 'C search (mce_nif.so code, XXH3)'
    if 'libc' in dso:
        return 'libc: malloc/free/memcmp/memmove (C store and VM)'
    if re.search(r'rwmutex|hash_get|atom', sym):
        return 'atom table (lookups, its rwlock)'
    if re.search(r'dec_term|binary2term|binary_to_term|enc_term|term_to_binary|erts_encode', sym):
        return 'ETF encode/decode'
    if in_nif:
        return 'VM called from the NIF'
    if 'perf-' in dso or '[JIT]' in dso:
        m = re.match(r"\$'?([^:']+)'?:", sym)
        mod = m.group(1) if m else sym
        if mod.startswith('mce$'):
            return 'Erlang: the program and OTP, translated (mce$*)'
        if mod in ('mce_exec', 'mce_search'):
            return 'Erlang: executor and driver (mce_exec, mce_search)'
        if mod.startswith('mce_'):
            return 'Erlang: checker runtime (mce_rt, mce_pid, mce_ref, ...)'
        if mod.startswith('global'):
            return 'Erlang: JIT BIF trampolines'
        return 'Erlang: other modules'
    if re.search(r'put_2|erase_1|get_1|erts_pd_|pd_hash', sym):
        return 'process dictionary BIFs'
    if re.search(r'garbage|gc_|sweep|erts_alcu|alloc|free|copy_struct|copy_shallow|size_object|move_', sym):
        return 'GC, allocation, copying'
    if re.search(r'schedule|proc_sig|check_io|ethr_', sym):
        return 'scheduler, signals'
    if sym.startswith('0x') or sym == '[unknown]':
        return 'VM internals, unresolved (stripped)'
    return 'VM: BIFs and runtime (named)'


def main():
    counts = collections.Counter()
    frames, keep = [], False

    def flush():
        if keep and frames:
            counts[classify(frames)] += 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            frames, keep = [], False
        elif not line[0].isspace():
            keep = line.split()[0] not in ('perf', 'sh', 'dash', 'dirname', 'basename')
        else:
            m = re.match(r'\s*[0-9a-f]+ (.*) \((.*)\)\s*$', line)
            if m:
                frames.append((m.group(1), m.group(2)))
    flush()
    total = sum(counts.values())
    for what, n in counts.most_common():
        print(f'{100.0 * n / total:5.1f}%  {what}')
    print(f'{total} samples')


if __name__ == '__main__':
    main()
