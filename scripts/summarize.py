"""Counts test results for test.sh and .ci/run (standard library only).

  summarize.py bazel LOG      reads `bazel test` output; prints "passed failed skipped",
                              counting test cases from each target's test.xml (gtest and
                              pytest write one <testcase> per test), a whole target as one
                              case when it has no XML, and SKIPPED targets as skipped.
  summarize.py junit XML      the same three numbers from one pytest --junitxml file.
  summarize.py total [--append FILE]
                              sums "passed failed skipped" lines from stdin, prints the
                              closing line "N passed, N failed, N skipped" (appending the
                              numbers to FILE when given) and exits 1 if anything failed.
"""
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

STATUS = re.compile(r"^(//\S+)\s+(?:\(cached\) )?(PASSED|FAILED TO BUILD|FAILED|FLAKY|TIMEOUT|SKIPPED|NO STATUS|INCOMPLETE)\b")


def bazel(log_path):
    passed = failed = skipped = 0
    saw_any = False
    for line in open(log_path, encoding="utf-8", errors="replace"):
        m = STATUS.match(line)
        if not m:
            continue
        saw_any = True
        target, status = m.groups()
        if status == "SKIPPED":
            skipped += 1
            continue
        xml = pathlib.Path("bazel-testlogs", *target[2:].split(":"), "test.xml")
        cases = []
        if status in ("PASSED", "FAILED", "FLAKY") and xml.exists():
            cases = list(ET.parse(xml).getroot().iter("testcase"))
        if not cases:
            if status == "PASSED":
                passed += 1
            else:
                failed += 1
            continue
        for c in cases:
            if c.find("failure") is not None or c.find("error") is not None:
                failed += 1
            elif c.find("skipped") is not None or c.get("status") == "notrun":
                skipped += 1
            else:
                passed += 1
        if status != "PASSED" and not any(c.find("failure") is not None for c in cases):
            failed += 1  # the target failed outside any test case (crash, leak check, timeout)
    if not saw_any and "Build did NOT complete successfully" in open(log_path, errors="replace").read():
        failed += 1  # a build failure ran no test: count it so it cannot pass silently
    print(passed, failed, skipped)


def total(args):
    p = f = s = 0
    for line in sys.stdin:
        parts = line.split()
        if len(parts) == 3:
            p, f, s = p + int(parts[0]), f + int(parts[1]), s + int(parts[2])
    if args[:1] == ["--append"]:
        with open(args[1], "a") as out:
            out.write(f"{p} {f} {s}\n")
    print(f"{p} passed, {f} failed, {s} skipped")
    sys.exit(1 if f else 0)


def junit(xml_path):
    """Counts the test cases of one pytest --junitxml file (a missing file is one failure)."""
    passed = failed = skipped = 0
    try:
        cases = list(ET.parse(xml_path).getroot().iter("testcase"))
    except (OSError, ET.ParseError):
        cases = []
    if not cases:
        failed = 1
    for c in cases:
        if c.find("failure") is not None or c.find("error") is not None:
            failed += 1
        elif c.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    print(passed, failed, skipped)


if __name__ == "__main__":
    if sys.argv[1] == "bazel":
        bazel(sys.argv[2])
    elif sys.argv[1] == "junit":
        junit(sys.argv[2])
    else:
        total(sys.argv[2:])
