"""Judge prompts as versioned template files (package data, read with importlib.resources).

Each template is a text file with a small front matter::

    ---
    name: judge_with_gt
    version: 1
    role: user
    placeholders: user_message, available_tools, generated_tool_calls, expected_responses
    ---
    ...body with {{user_message}} ...

Why files with a version: a prompt is part of what a stored verdict means. Its tag
``name@version`` is stored with results, so a change of wording is a new version and never
silently mixes with verdicts of the old one; the response cache keys on the exact text, so a
template must render byte-identical text for as long as its version stands. Placeholders are
``{{name}}`` (not ``str.format``), so JSON braces in a prompt need no escaping. The body ends
with exactly one newline unless the front matter says ``final_newline: no``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, cast, get_args

from tooldiag.errors import UserError
from tooldiag.trajectory import Message, Role

_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    #: A chat role for prompts sent as a message; data files (rubrics) may say ``data``.
    role: str
    placeholders: tuple[str, ...]
    body: str

    @property
    def tag(self) -> str:
        return f"{self.name}@{self.version}"

    def render(self, **values: Any) -> str:
        """Fill every placeholder; lists and dicts are JSON-serialised (indent 2), as released."""
        missing = [p for p in self.placeholders if p not in values]
        if missing:
            raise ValueError(f"template {self.tag} needs {', '.join(missing)}")

        def text(value: Any) -> str:
            if isinstance(value, str):
                return value
            return json.dumps(value, indent=2, ensure_ascii=False)

        return _PLACEHOLDER.sub(lambda m: text(values[m.group(1)]) if m.group(1) in values else m.group(0), self.body)

    def message(self, **values: Any) -> Message:
        """The rendered prompt as one chat message in the template's role."""
        if self.role not in get_args(Role):
            raise UserError(f"prompt template {self.tag}: role {self.role!r} is not a chat role", hint="use role: user")
        return Message(role=cast(Role, self.role), content=self.render(**values))


def parse_template(text: str, origin: str) -> PromptTemplate:
    """A template from its file text; ``origin`` names the file in error messages."""
    if not text.startswith("---\n"):
        raise UserError(f"prompt template {origin} has no front matter", hint="start it with ---, name:, version:, ---")
    header, sep, body = text[4:].partition("\n---\n")
    if not sep:
        raise UserError(f"prompt template {origin}: front matter is not closed", hint="end it with a line ---")
    meta: dict[str, str] = {}
    for line in header.splitlines():
        key, _, value = line.partition(":")
        meta[key.strip()] = value.strip()
    for key in ("name", "version"):
        if not meta.get(key):
            raise UserError(f"prompt template {origin} lacks '{key}:'", hint="add it to the front matter")
    placeholders = tuple(p.strip() for p in meta.get("placeholders", "").split(",") if p.strip())
    used = set(_PLACEHOLDER.findall(body))
    undeclared = used - set(placeholders)
    if undeclared:
        raise UserError(
            f"prompt template {origin} uses undeclared placeholders: {', '.join(sorted(undeclared))}",
            hint="list them under 'placeholders:'",
        )
    ending = "" if meta.get("final_newline", "yes").lower() in ("no", "false") else "\n"
    body = body.strip("\n") + ending
    return PromptTemplate(meta["name"], meta["version"], meta.get("role", "user"), placeholders, body)


def load_prompt(
    package: str, name: str, prompt_dir: str | Path | None = None, *, folder: str = "prompts", suffix: str = ".txt"
) -> PromptTemplate:
    """Template ``name`` (file ``name`` + ``suffix``) from ``prompt_dir`` when it has the file, else
    the one packaged in ``package``'s ``folder``."""
    file_name = f"{name}{suffix}"
    if prompt_dir is not None:
        path = Path(prompt_dir) / file_name
        if path.exists():
            return parse_template(path.read_text("utf-8"), str(path))
    resource = resources.files(package).joinpath(f"{folder}/{file_name}")
    if not resource.is_file():
        where = package.replace(".", "/")
        raise UserError(f"no prompt template named {name!r}", hint=f"see {where}/{folder}/")
    return parse_template(resource.read_text("utf-8"), f"{folder}/{file_name}")
