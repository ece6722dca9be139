#!/usr/bin/env python3
# The reference of tests/core/syntax/nfc_test.cpp: strings and their NFC
# form computed by Python's unicodedata.normalize, not by core/syntax:
#   python3 gen_nfc_cases.py > nfc_cases.inc
# Use the Python whose Unicode version matches core/syntax/nfc_tables.inc.
import sys
import unicodedata

cases = []


def add(cps):
    s = ''.join(map(chr, cps))
    cases.append((cps, [ord(c) for c in unicodedata.normalize('NFC', s)]))


def canonical(cp):
    d = unicodedata.decomposition(chr(cp))
    return d and not d.startswith('<')


scalars = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
for cp in scalars:
    if canonical(cp):
        add([cp])  # decomposition and recomposition
        add([ord(c) for c in unicodedata.normalize('NFD', chr(cp))])
        # Marks of class 230 (U+0301) and 220 (U+0323) after it:
        # reordering, and composition past a lower class only.
        add([cp, 0x0301, 0x0323])
    elif unicodedata.combining(chr(cp)):
        # Reordering around each non-starter, and composition with a base.
        add([0x0061, cp, 0x0301])
        add([0x0061, 0x0323, cp])
# Hangul (Unicode §3.12): L+V, LV+T, L+V+T, and broken sequences.
for l in range(0x1100, 0x1113, 3):
    for v in range(0x1161, 0x1176, 4):
        add([l, v])
        add([l, v, 0x11A8 + (l + v) % 27])
        add([l, 0x0301, v])
add([0xAC00, 0x11A8])   # LV + T
add([0xAC01, 0x11A8])   # LVT + T: no composition
add([0xAC00, 0x11A7])   # T base itself is not a trailing consonant
add([0x1100, 0x1100, 0x1161])
# Starters that compose with a following starter (both class 0).
add([0x0B47, 0x0B3E])
add([0x0B47, 0x0301, 0x0B3E])
add([0x09C7, 0x09BE])
add([0x1025, 0x102E])
# The examples of issue #34 and docs/syntax.md.
add([ord(c) for c in "me.\u037e@example.com"])
add([ord(c) for c in "\u212aim@acme.io"])
add([ord(c) for c in "a@bu\u0308cher.de"])
add([ord(c) for c in "\u0958" * 3])
add([0x1D15E, 0x1D165])  # composition exclusions stay decomposed
add([0xFB2C, 0x05B8])
add([0x0041, 0x030A, 0x212B])
add([0x0073, 0x0323, 0x0307, 0x0071, 0x0307, 0x0323])

w = sys.stdout.write
w("// Generated from Unicode %s (Python unicodedata) by\n"
  "// tests/core/syntax/gen_nfc_cases.py; do not edit by hand.\n"
  "// Each case: the input's code points, 0, their NFC form, 0.\n"
  % unicodedata.unidata_version)
w("constexpr std::string_view nfc_cases_unicode_version = \"%s\";\n"
  % unicodedata.unidata_version)
w("constexpr char32_t nfc_cases[] = {\n")
for a, b in cases:
    w("    " + ",".join("0x%X" % x for x in a + [0] + b + [0]) + ",\n")
w("};\n")
print("%d cases" % len(cases), file=sys.stderr)
