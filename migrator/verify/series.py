"""Numeric series read from what a smoke command prints: ``loss: 2.31``, ``12/20 loss=2.31``.

Without a JSON report, ``migrate verify`` compares the numbers a program prints. Each
``<label>: <number>`` or ``<label>=<number>`` pair on a stdout line becomes one value of the series
keyed by its label; the n-th occurrence is compared with the n-th occurrence on the other run.
A ``k/N`` prefix (``12/20 loss: 2.31``, ``step 12/20: ...``, ``[12/20]``) names the step.
Timing-like labels (time, ms, it/s, throughput, tokens/s, MFU, memory, ...) describe the run, not
the model: they are kept as metrics and reported side by side, never compared for equality.
``--compare REGEX`` replaces the default pattern; its named groups become keys (a single unnamed
group, or the whole match, takes the key ``match<index>``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)"
_NUMBER_RE = re.compile(rf"^(?:{NUMBER})$", re.IGNORECASE)
_UNITS = (
    r"%|(?:it|s|tok|tokens|samples|seq|img|images|steps)/s(?:ec)?|s/it|[TGMK]?FLOPS?(?:/s)?"
    r"|[TGMK]i?B|B|ms|us|µs|ns|secs?|s|min|h|x"
)
#: A label is at most this long: the bound keeps the scan of a line linear in its length (an
#: unbounded lazy label tried from every position was quadratic: minutes on 2 MB of output).
MAX_LABEL = 80
#: Lines longer than this are not read for values (no metric line is); they are counted.
MAX_LINE = 65_536
_PAIR = re.compile(
    r"(?<![\w'\"])(?P<label>['\"]?[A-Za-z_][\w .()/%\-]{0,80}?['\"]?)\s{0,16}[:=]\s{0,16}"
    rf"(?P<value>{NUMBER})"
    rf"(?:\s*(?P<unit>{_UNITS}))?"
    r"(?=$|[\s,;|)\]}])",
    re.IGNORECASE,
)
_STEP = re.compile(
    r"^\s*\[?\s*(?:(?:step|iter(?:ation)?|epoch|batch)\s*)?(?P<step>\d+)\s*/\s*(?P<total>\d+)\s*\]?"
    r"\s*[:|,\-]?\s*",
    re.IGNORECASE,
)
TIMING_WORDS = (
    "time",
    "ms",
    "sec",
    "second",
    "elapsed",
    "duration",
    "latency",
    "throughput",
    "speed",
    "/s",
    "per second",
    "s/it",
    "it/s",
    "tok/s",
    "tokens/s",
    "samples/s",
    "mfu",
    "flops",
    "memory",
    "mem",
    "allocated",
    "reserved",
    "eta",
    "fps",
    "runtime",
    "wall",
)
"""Words that make a label (or its unit) timing-like: reported as a metric, not compared."""
_TIMING_UNITS = frozenset(
    {"s", "ms", "us", "µs", "ns", "sec", "secs", "min", "h", "b", "kb", "mb", "gb", "tb"}
    | {"kib", "mib", "gib", "tib"}
)
_HIGHER_WORDS = ("/s", "per second", "throughput", "mfu", "speed", "fps", "flops")


@dataclass(frozen=True, slots=True)
class Point:
    """One printed value: its position among the key's values and the step it was printed at."""

    value: float
    step: str | None
    line: int


@dataclass(slots=True)
class Series:
    """Every key's values, in the order printed; ``metrics`` holds the timing-like ones."""

    values: dict[str, list[Point]] = field(default_factory=dict)
    metrics: dict[str, list[Point]] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """No comparable value was found."""
        return not self.values

    def as_outputs(self) -> dict[str, list[float]]:
        """``{key: [values...]}`` (what the receipt records as ``outputs``)."""
        return {key: [point.value for point in points] for key, points in self.values.items()}

    def steps(self) -> dict[str, list[str | None]]:
        """``{key: [step or None, ...]}``, parallel to :meth:`as_outputs`."""
        return {key: [point.step for point in points] for key, points in self.values.items()}


def normalise_label(label: str) -> str:
    """``"'Train Loss'"`` → ``"train loss"``: quotes stripped, spaces collapsed, lower case."""
    text = label.strip().strip("'\"").strip()
    return re.sub(r"\s+", " ", text).lower()


def is_timing(label: str, unit: str | None = None) -> bool:
    """Whether a label (with its unit) measures the run rather than the computation."""
    words = re.split(r"[\s_]+", label)
    text = f" {label} "
    for word in TIMING_WORDS:
        if "/" in word or " " in word:
            if word in text:
                return True
        elif word in words:
            return True
    return unit is not None and (unit.lower() in _TIMING_UNITS or "/" in unit)


_HIGHER_PATTERN = re.compile(
    r"/s\b|/sec|per[ _-]?s(?:ec(?:ond)?)?\b|\b(?:tps|qps|mfu|fps|flops|throughput|speed)\b"
    r"|(?:tok(?:en)?s?|samples?|it(?:er)?s?|images?|img|seqs?|steps?|queries)[ _-]?per[ _-]?s",
    re.IGNORECASE,
)
_LOWER_PATTERN = re.compile(
    r"\b(?:time|times|ms|us|ns|secs?|seconds?|elapsed|duration|latency|runtime|wall|eta|s/it"
    r"|memory|mem|allocated|reserved|bytes|[kmgt]i?b)\b|_(?:ms|s|sec|secs|seconds|bytes)\b"
    r"|\bs/it\b",
    re.IGNORECASE,
)


def direction(label: str, unit: str | None = None) -> str | None:
    """``"higher"`` for throughput-like metrics, ``"lower"`` for times and memory, None when
    neither the label nor the unit says which (a metric of unknown direction is only "changed")."""
    text = f"{label} {unit or ''}".replace("_", " ") + f" {label}"
    if _HIGHER_PATTERN.search(text) or any(word in text.lower() for word in _HIGHER_WORDS):
        return "higher"
    if _LOWER_PATTERN.search(text) or (unit is not None and unit.lower() in _TIMING_UNITS):
        return "lower"
    return None


def higher_is_better(label: str, unit: str | None = None) -> bool:
    """Throughput-like metrics are better higher; times and memory are better lower."""
    return direction(label, unit) == "higher"


def is_memory(label: str, unit: str | None = None) -> bool:
    """Whether a metric measures memory (its change is "more"/"less", not "slower"/"faster")."""
    text = f"{label} {unit or ''}".lower()
    return bool(re.search(r"memory|\bmem\b|allocated|reserved|bytes|\b[kmgt]?i?b\b", text))


def _float(text: str) -> float | None:
    if not _NUMBER_RE.match(text.strip()):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _is_json_object(line: str) -> bool:
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


_LABEL_BEFORE = re.compile(
    r"(?<![\w'\"])(?P<label>['\"]?[A-Za-z_][\w .()/%\-]{0,80}?['\"]?)\s{0,16}$"
)
_VALUE_AFTER = re.compile(
    rf"\s{{0,16}}(?P<value>{NUMBER})(?:\s*(?P<unit>{_UNITS}))?(?=$|[\s,;|)\]}}])",
    re.IGNORECASE,
)


def pairs(line: str) -> list[tuple[str, str, str | None]]:
    """(label, value, unit) of each ``label: number`` / ``label=number`` of a line, as
    ``_PAIR.finditer`` finds them, in time linear in the line: the label is looked for only in
    the ``MAX_LABEL`` characters before each separator, the value right after it."""
    found: list[tuple[str, str, str | None]] = []
    floor = 0  # a label never reaches back into the previous pair
    index = 0
    length = len(line)
    while index < length:
        char = line[index]
        if char != ":" and char != "=":
            index += 1
            continue
        start = max(floor, index - MAX_LABEL - 20)
        label = _LABEL_BEFORE.search(line, start, index)
        value = _VALUE_AFTER.match(line, index + 1)
        if label is not None and value is not None:
            found.append((label["label"], value["value"], value["unit"]))
            floor = value.end()
            index = value.end()
            continue
        index += 1
    return found


def extract_default(stdout: str) -> Series:
    """Pairs of ``label: number`` / ``label=number`` on each line (see the module docstring)."""
    series = Series()
    for number, line in enumerate(stdout.splitlines(), 1):
        if len(line) > MAX_LINE or (":" not in line and "=" not in line):
            continue
        if _is_json_object(line):
            continue  # JSON reports are read as JSON (the last one), not as label pairs
        step_match = _STEP.match(line)
        step = None
        rest = line
        if step_match:
            step = f"{step_match['step']}/{step_match['total']}"
            rest = line[step_match.end() :]
        for raw_label, raw_value, unit in pairs(rest):
            value = _float(raw_value)
            label = normalise_label(raw_label)
            if value is None or not label or not any(ch.isalpha() for ch in label):
                continue
            target = series.metrics if is_timing(label, unit) else series.values
            if unit and label not in series.units:
                series.units[label] = unit
            target.setdefault(label, []).append(Point(value, step, number))
    return series


def extract_with(stdout: str, patterns: Sequence[re.Pattern[str]]) -> Series:
    """Values captured by user patterns: named groups are keys, else ``match<index>``."""
    series = Series()
    for number, line in enumerate(stdout.splitlines(), 1):
        if len(line) > MAX_LINE:
            continue
        step_match = _STEP.match(line)
        step = f"{step_match['step']}/{step_match['total']}" if step_match else None
        for index, pattern in enumerate(patterns):
            for match in pattern.finditer(line):
                groups = match.groupdict()
                if groups:
                    items = [(name, text) for name, text in groups.items() if text is not None]
                elif match.re.groups:
                    items = [(f"match{index}", match.group(1))]
                else:
                    items = [(f"match{index}", match.group(0))]
                for key, text in items:
                    value = _float(text)
                    if value is not None:
                        series.values.setdefault(key, []).append(Point(value, step, number))
    # Timing-like values are still reported beside the user's keys.
    series.metrics = extract_default(stdout).metrics
    return series


def extract(stdout: str, patterns: Sequence[re.Pattern[str]] = ()) -> Series:
    """The series of one run: user patterns when given, the default pairs otherwise."""
    return extract_with(stdout, patterns) if patterns else extract_default(stdout)
