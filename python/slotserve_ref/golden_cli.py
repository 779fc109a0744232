"""The command line shared by the golden-data writers (tests/golden/make_golden.py for our own
format, slotserve_ref.fla.make_golden_checkpoints for fla checkpoints): write every variant, a
chosen few, or --check the committed ones against the current reference."""

import argparse
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence


def run_golden_cli(description: str, variants: Iterable[str], default_out: Path,
                   write_variant: Callable[[Path, str], None],
                   check_variant: Callable[[Path, str], bool],
                   argv: Optional[Sequence[str]] = None) -> int:
    """Parses --out/--only/--check and runs the writer or the checker; returns the exit code
    (1 when --check finds a mismatch)."""
    variants = list(variants)
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=default_out,
                        help="directory holding one folder per variant")
    parser.add_argument("--only", action="append", choices=sorted(variants),
                        help="restrict to these variants (repeatable)")
    parser.add_argument("--check", action="store_true",
                        help="compare committed data with the current reference; write nothing")
    args = parser.parse_args(argv)
    names = args.only or variants
    if args.check:
        # Every variant is checked (no short-circuit) so one run reports all mismatches.
        return 0 if all([check_variant(args.out, name) for name in names]) else 1
    for name in names:
        write_variant(args.out, name)
    return 0
