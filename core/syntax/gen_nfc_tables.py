#!/usr/bin/env python3
# The NFC data of core/syntax/nfc.cpp (UAX #15), from Python's unicodedata;
# run through gen_unicode_tables.py --nfc > nfc_tables.inc.
import sys
import unicodedata


def canonical_decomposition(cp):
    # The mapping of one code point, one level deep; [] when it has none or
    # only a compatibility one (a <tag>). Hangul syllables are algorithmic.
    d = unicodedata.decomposition(chr(cp))
    if not d or d.startswith('<'):
        return []
    return [int(x, 16) for x in d.split()]


def full_decomposition(cp):
    d = canonical_decomposition(cp)
    if not d:
        return [cp]
    out = []
    for x in d:
        out += full_decomposition(x)
    return out


def runs(values):
    # [(first, last, value)] for the code points whose value is not 0.
    out = []
    for cp in range(0x110000):
        v = values(cp)
        if v and out and out[-1][1] == cp - 1 and out[-1][2] == v:
            out[-1] = (out[-1][0], cp, v)
        elif v:
            out.append((cp, cp, v))
    return out


def is_surrogate(cp):
    return 0xD800 <= cp <= 0xDFFF


def ccc(cp):
    return 0 if is_surrogate(cp) else unicodedata.combining(chr(cp))


def quick_check(cp):
    # NFC_Quick_Check (UAX #15 §9): 2 = No (never in NFC text: its NFC form
    # alone is something else), 1 = Maybe (may compose with what precedes
    # it: the second of a primary composite's pair), 0 = Yes.
    if is_surrogate(cp):
        return 0
    c = chr(cp)
    if unicodedata.normalize('NFC', c) != c:
        return 2
    return 1 if cp in seconds else 0


# Primary composites (UAX #15 §3.6): a two-code-point canonical mapping that
# NFC keeps (so neither a singleton, a non-starter decomposition nor a
# composition exclusion).
pairs = []
for cp in range(0x110000):
    if is_surrogate(cp):
        continue
    d = canonical_decomposition(cp)
    if len(d) == 2 and unicodedata.normalize('NFC', chr(cp)) == chr(cp):
        pairs.append((d[0], d[1], cp))
pairs.sort()
seconds = {b for a, b, c in pairs}
# Hangul vowels and trailing consonants compose algorithmically (§3.12).
seconds |= set(range(0x1161, 0x1161 + 21)) | set(range(0x11A8, 0x11A7 + 28))


def main():
    w = sys.stdout.write
    w("// Generated from Unicode %s (Python unicodedata) by\n"
      "// core/syntax/gen_unicode_tables.py --nfc; do not edit by hand.\n"
      % unicodedata.unidata_version)
    w("inline constexpr std::string_view nfc_unicode_version = \"%s\";\n\n"
      % unicodedata.unidata_version)

    w("// Canonical_Combining_Class, runs of code points with one non-zero\n"
      "// class: first, last, class.\n")
    w("constexpr class_run combining_classes[] = {\n")
    for a, b, v in runs(ccc):
        w("    {0x%04X, 0x%04X, %d},\n" % (a, b, v))
    w("};\n\n")

    w("// NFC_Quick_Check: first, last, 1 (Maybe) or 2 (No); Yes elsewhere.\n")
    w("constexpr class_run quick_checks[] = {\n")
    for a, b, v in runs(quick_check):
        w("    {0x%04X, 0x%04X, %d},\n" % (a, b, v))
    w("};\n\n")

    w("// Code points a quick check cannot pass over (a non-zero combining\n"
      "// class, or NFC_Quick_Check Maybe or No): text without them is NFC.\n")
    w("constexpr nfc_range nfc_unsafe[] = {\n")
    for a, b, v in runs(lambda cp: 1 if ccc(cp) or quick_check(cp) else 0):
        w("    {0x%04X, 0x%04X},\n" % (a, b))
    w("};\n\n")

    pool = []
    rows = []
    for cp in range(0x110000):
        if is_surrogate(cp) or not canonical_decomposition(cp):
            continue
        full = full_decomposition(cp)
        rows.append((cp, len(pool), len(full)))
        pool += full
    w("// Full canonical decompositions (Hangul syllables are algorithmic):\n"
      "// code point, offset into decomposition_pool, length.\n")
    w("constexpr decomposition decompositions[] = {\n")
    for cp, off, n in rows:
        w("    {0x%04X, %d, %d},\n" % (cp, off, n))
    w("};\n\n")
    w("constexpr char32_t decomposition_pool[] = {\n")
    for i in range(0, len(pool), 8):
        w("    " + " ".join("0x%04X," % x for x in pool[i:i + 8]) + "\n")
    w("};\n\n")

    w("// Primary composites (no Hangul): first, second, composite; sorted.\n")
    w("constexpr composition compositions[] = {\n")
    for a, b, c in pairs:
        w("    {0x%04X, 0x%04X, 0x%04X},\n" % (a, b, c))
    w("};\n")

    print("nfc tables: %d decompositions, %d pairs" % (len(rows), len(pairs)),
          file=sys.stderr)


if __name__ == '__main__':
    main()
