"""Prints each failed test in the given TRX files, one line each: the file's runtime, the test's name, and the first
line of its failure message (for .ci/run's closing recap, where a CI log is read from its end).

    python3 scripts/lib/trx_failures.py artifacts/test-results/tests_*.trx
"""

import re
import sys
import xml.etree.ElementTree as ET

NS = {"t": "http://microsoft.com/schemas/VisualStudio/TeamTest/2010"}


def main(paths: list[str]) -> int:
    for path in paths:
        tfm = re.search(r"tests_(net[0-9.]+)_", path)
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as error:
            print(f"  {path}: unreadable ({error})")
            continue
        for result in root.iterfind(".//t:Results/t:UnitTestResult", NS):
            if result.get("outcome") != "Failed":
                continue
            message = result.findtext("t:Output/t:ErrorInfo/t:Message", default="", namespaces=NS).strip()
            first = message.splitlines()[0] if message else "(no message)"
            print(f"  {tfm.group(1) if tfm else path}: {result.get('testName')}: {first[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
