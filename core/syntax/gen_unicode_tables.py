#!/usr/bin/env python3
# Regenerates the Unicode tables of core/syntax from Python's unicodedata:
#   python3 gen_unicode_tables.py > unicode_tables.inc
#   python3 gen_unicode_tables.py --nfc > nfc_tables.inc
# Both files must come from one Unicode version (the first line says which).
import unicodedata, sys
if len(sys.argv) > 1 and sys.argv[1] == '--nfc':
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_nfc_tables
    gen_nfc_tables.main()
    sys.exit(0)
def ranges(pred):
    out=[]; start=None
    for cp in range(0x80, 0x110000):
        p = pred(cp)
        if p and start is None: start=cp
        if not p and start is not None: out.append((start,cp-1)); start=None
    if start is not None: out.append((start,0x10FFFF))
    return out
extra = {0x034F,0x115F,0x1160,0x17B4,0x17B5,0x3164,0xFFA0}
def forbidden(cp):
    if 0xD800<=cp<=0xDFFF: return False
    if cp in (0x200C,0x200D): return False
    if cp in extra: return True
    if 0xFDD0<=cp<=0xFDEF or (cp & 0xFFFE)==0xFFFE: return True
    return unicodedata.category(chr(cp)) in ('Cc','Cf','Zs','Zl','Zp')
r = ranges(forbidden)

pairs=[]
for cp in range(0x80,0x110000):
    c=chr(cp)
    if 0xD800<=cp<=0xDFFF: continue
    l=c.lower()
    if l!=c and len(l)==1 and ord(l)>=0x80 and unicodedata.category(c)=='Lu':
        pairs.append((cp,ord(l)))

# compress pairs into runs: (first, last, delta, stride)
runs=[]
i=0
while i<len(pairs):
    a,b=pairs[i]; d=b-a
    j=i
    # try stride 1 then stride 2
    best=(i,1)
    for stride in (1,2):
        k=i
        while k+1<len(pairs) and pairs[k+1][0]==pairs[k][0]+stride and pairs[k+1][1]-pairs[k+1][0]==d: k+=1
        if k-i+1>best[0]-i+1 or (k>i and best[0]==i): 
            if k>best[0]: best=(k,stride)
    k,stride=best
    runs.append((a,pairs[k][0],d,stride if k>i else 1))
    i=k+1

w=sys.stdout.write
w("// Generated from Unicode %s (Python unicodedata) by\n// core/syntax/gen_unicode_tables.py; do not edit by hand.\n" % unicodedata.unidata_version)
w("// Code points >= U+0080 that are controls (Cc), format characters (Cf),\n// separators (Zs, Zl, Zp), invisible fillers or noncharacters; ZWNJ and ZWJ\n// are left to the IDNA CONTEXTJ rules.\n")
w("constexpr code_point_range forbidden_ranges[] = {\n")
for a,b in r: w("    {0x%04X, 0x%04X},\n"%(a,b))
w("};\n\n// Simple upper-case -> lower-case mappings (Lu, one code point to one,\n// never to ASCII): first, last, delta, stride.\n")
w("constexpr case_run lower_runs[] = {\n")
for a,b,d,s in runs: w("    {0x%04X, 0x%04X, %d, %d},\n"%(a,b,d,s))
w("};\n")
# General category M (Mn, Mc, Me): a local part may not start with one.
w("\n// Combining marks (general category M: Mn, Mc, Me).\n")
w("constexpr code_point_range mark_ranges[] = {\n")
for a,b in ranges(lambda cp: unicodedata.category(chr(cp)).startswith('M')):
    w("    {0x%04X, 0x%04X},\n"%(a,b))
w("};\n")
m={}
for a,b,d,s in runs:
    for cp in range(a,b+1,s): m[cp]=cp+d
assert m==dict(pairs), "runs mismatch"
print("runs ok", file=sys.stderr)
spans=sorted((a,b) for a,b,d,s in runs)
for (a1,b1),(a2,b2) in zip(spans,spans[1:]): assert b1<a2, ("overlap",hex(a1),hex(a2))
print("no overlap", file=sys.stderr)
