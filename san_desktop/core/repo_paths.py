"""What SAN Desktop may write into a repository it does not own (issue 23): file paths, the path
template they come from, branch names and GitHub repository names.

One policy for GitHub and local git alike. A path is relative POSIX, made of non-empty parts; no part is
``.`` or ``..``, or any spelling of ``.git`` that git, NTFS or HFS+ would take for it (CVE-2014-9390); no
control characters, characters Windows cannot store nor names it keeps for devices (``CON.md``,
``nul.txt``: a TIL repository may be cloned there); each part and the whole are of bounded length. The
template is text with a fixed set of named fields, parsed here once: no format specs, no attribute or index
access, nothing that ``str.format`` would evaluate.
Branch names follow ``git check-ref-format --branch``. Each refusal is a ``ValueError`` whose message says
what is wrong and what is allowed; callers turn it into their own kind of error.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date

from san_desktop.core.windows_names import is_reserved_name

MAX_PART_BYTES = 255  # a file name on common file systems
MAX_PATH_BYTES = 1024
MAX_TEMPLATE_LENGTH = 200
MAX_BRANCH_BYTES = 200
TEMPLATE_FIELDS = ("yyyy", "mm", "dd", "date", "slug")
DEFAULT_TEMPLATE = "TIL/{yyyy}/{mm}/{dd}/{slug}.md"

_WINDOWS_FORBIDDEN = set('<>:"|?*\\')
# code points HFS+ ignores when it compares names (git's utf8.c): ".g\u200cit" is ".git" there
_HFS_IGNORED = dict.fromkeys([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])
_BRANCH_FORBIDDEN = set(" ~^:?*[\\")
_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_REPOSITORY_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")


def shown(text: str, limit: int = 80) -> str:
    """``text`` quoted for a message: control characters escaped, cut to ``limit`` characters."""
    cut = text if len(text) <= limit else text[: limit - 3] + "..."
    return "'" + "".join(c.encode("unicode_escape").decode() if _is_control(c) else c for c in cut) + "'"


def _is_control(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") and char != "\u200d"


def _is_git_dir_name(part: str) -> bool:
    """``.git`` as git, NTFS (trailing dots and spaces, the 8.3 name ``git~1``) or HFS+ (ignored code
    points, any case) would read it."""
    name = part.translate(_HFS_IGNORED).lower().rstrip(". ")
    return name in (".git", "git~1") or name.startswith((".git:", "git~1:"))


def check_repo_path(path: str) -> str:
    """``path`` when it may be written into a repository; else ValueError saying why."""
    if not path:
        raise ValueError("The file path is empty.")
    if path.startswith("/"):
        raise ValueError(f"The file path {shown(path)} starts with '/': give it relative to the repository's top.")
    if path.endswith("/"):
        raise ValueError(f"The file path {shown(path)} ends with '/': it must name a file.")
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise ValueError(f"The file path is longer than {MAX_PATH_BYTES} bytes ({shown(path, 40)}).")
    for part in path.split("/"):
        _check_part(path, part)
    return path


def _check_part(path: str, part: str) -> None:
    where = f"The file path {shown(path)}"
    if not part:
        raise ValueError(f"{where} has an empty part (two slashes in a row).")
    if part in (".", ".."):
        raise ValueError(f"{where} has a {part!r} part: paths may not step into or out of folders.")
    if _is_git_dir_name(part):
        raise ValueError(f"{where} names git's own folder ({shown(part)}): SAN Desktop never writes there.")
    if bad := next((c for c in part if _is_control(c)), None):
        raise ValueError(f"{where} holds a control character ({shown(bad)}).")
    if bad := next((c for c in part if c in _WINDOWS_FORBIDDEN), None):
        raise ValueError(f"{where} holds {bad!r}, which Windows cannot store in a file name.")
    if part != part.rstrip(". "):
        raise ValueError(f"{where} has a part ending with a dot or a space ({shown(part)}), which Windows drops.")
    if is_reserved_name(part):
        raise ValueError(
            f"{where} has a part Windows keeps for a device ({shown(part)}: CON, PRN, AUX, NUL, COM1-9, LPT1-9, "
            "with any extension), which a clone there could not hold."
        )
    try:
        size = len(part.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"{where} is not valid Unicode.") from None
    if size > MAX_PART_BYTES:
        raise ValueError(f"{where} has a part longer than {MAX_PART_BYTES} bytes.")


@dataclass(frozen=True)
class PathTemplate:
    """A parsed ``github.path_template``: literal text and named fields, in order."""

    text: str
    pieces: tuple[tuple[bool, str], ...]  # (is_field, literal text or field name)

    def render(self, local_date: str, slug: str) -> str:
        """The path for a day and a title's slug; checked by ``check_repo_path``."""
        day = date.fromisoformat(local_date)
        values = {"yyyy": f"{day.year:04d}", "mm": f"{day.month:02d}", "dd": f"{day.day:02d}", "date": local_date}
        values["slug"] = slug
        return check_repo_path("".join(values[text] if is_field else text for is_field, text in self.pieces))


def parse_template(text: str) -> PathTemplate:
    """The template, or ValueError saying what is wrong: an unknown field, a format spec or attribute,
    an unmatched brace, a path the policy refuses, or one that names the same file every day."""
    fields = ", ".join("{" + name + "}" for name in TEMPLATE_FIELDS)
    if len(text) > MAX_TEMPLATE_LENGTH:
        raise ValueError(f"The path template is longer than {MAX_TEMPLATE_LENGTH} characters.")
    pieces: list[tuple[bool, str]] = []
    literal: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if text.startswith(("{{", "}}"), index):
            literal.append(char)
            index += 2
            continue
        if char == "}":
            raise ValueError(f"The path template {shown(text)} has a '}}' without its '{{' (write }}}} for a brace).")
        if char != "{":
            literal.append(char)
            index += 1
            continue
        end = text.find("}", index)
        if end < 0:
            raise ValueError(f"The path template {shown(text)} has a '{{' that is never closed.")
        name = text[index + 1 : end]
        if name not in TEMPLATE_FIELDS:
            bare = re.match(r"[A-Za-z_]*", name)
            hint = (
                f" Fields take no format, attribute or index: write {{{bare.group()}}}."
                if bare and bare.group() in TEMPLATE_FIELDS
                else ""
            )
            unknown = shown("{" + name + "}")
            raise ValueError(f"The path template has an unknown field {unknown}; it may use {fields}.{hint}")
        if literal:
            pieces.append((False, "".join(literal)))
            literal = []
        pieces.append((True, name))
        index = end + 1
    if literal:
        pieces.append((False, "".join(literal)))
    template = PathTemplate(text, tuple(pieces))
    used = {name for is_field, name in pieces if is_field}
    if not used & {"date", "dd", "slug"}:
        raise ValueError(
            f"The path template {shown(text)} names the same file every day: put {{date}}, {{dd}} or {{slug}} in it."
        )
    try:
        template.render("2026-12-31", "a-title")
    except ValueError as exc:
        raise ValueError(f"The path template gives a path that cannot be written: {exc}") from None
    return template


def check_branch_name(name: str) -> str:
    """``name`` when it is a branch name git accepts (``git check-ref-format --branch``); else ValueError."""
    where = f"The branch name {shown(name)}"
    if not name:
        raise ValueError("The branch name is empty.")
    if name == "HEAD" or name.startswith("-") or name == "@":
        raise ValueError(f"{where} is not a branch name git accepts: choose a name such as til.")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_BRANCH_BYTES:
        raise ValueError(f"{where} is longer than {MAX_BRANCH_BYTES} bytes.")
    problems = [
        (any(_is_control(c) or c == "\x7f" for c in name), "holds a control character"),
        (bool(set(name) & _BRANCH_FORBIDDEN), "holds a space or one of ~ ^ : ? * [ \\"),
        (".." in name, "holds '..'"),
        ("@{" in name, "holds '@{'"),
        (name.startswith("/") or name.endswith("/") or "//" in name, "has an empty part between slashes"),
        (name.endswith("."), "ends with a dot"),
        (any(part.startswith(".") or part.endswith(".lock") for part in name.split("/")),
         "has a part that starts with a dot or ends with .lock"),
    ]  # fmt: skip
    for broken, why in problems:
        if broken:
            raise ValueError(f"{where} {why}, which git does not allow in branch names.")
    return name


def check_repository_name(name: str) -> tuple[str, str]:
    """``owner/name`` split in two when both are names GitHub allows; else ValueError."""
    owner, slash, repository = name.partition("/")
    if (
        not slash
        or not _OWNER.fullmatch(owner)
        or not _REPOSITORY_NAME.fullmatch(repository)
        or repository in (".", "..")
    ):
        raise ValueError(
            f"The repository {shown(name)} is not owner/name (letters, digits and - for the owner; letters, "
            "digits, '.', '_' and '-' for the name, which is not '.' or '..')."
        )
    return owner, repository


MAX_SUFFIX = 20  # a taken path is tried again as name-1 … name-20


def with_suffix(path: str, n: int) -> str:
    """``TIL/x.md`` as ``TIL/x-n.md``; the suffix goes into the last part, before its extension."""
    folder, slash, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    renamed = f"{stem}-{n}.{ext}" if dot and stem else f"{name}-{n}"
    return f"{folder}{slash}{renamed}"


def path_candidates(path: str) -> list[str]:
    """``path``, then the names a taken path is tried as, in order (each passing ``check_repo_path``)."""
    candidates = [path]
    for n in range(1, MAX_SUFFIX + 1):
        try:
            candidates.append(check_repo_path(with_suffix(path, n)))
        except ValueError:
            break  # the name grew too long: the later ones would be longer still
    return candidates
