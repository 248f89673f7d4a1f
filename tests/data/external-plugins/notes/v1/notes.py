#!/usr/bin/env python3
"""notes/v1: a small external plugin for operator-rs and kubebuilder (their JSON protocol on
stdin and stdout), standing for the plugins users write in any language.

- init, edit: adds docs/operator-notes.md, the project's notes, signed by --notes-owner;
- create api, create webhook: adds docs/kinds/<kind>.md (<kind>-webhooks.md) for --kind;
- each records its entry in PROJECT, plugins["notes/v1"] (owner, and the kinds it has notes for);
- flags, metadata: its flags and help, per subcommand (args ["--init"] ...).
Only the Python standard library: PROJECT's entry is added as YAML text.
"""
import json
import re
import sys

KEY = "notes/v1"
SUBCOMMANDS = ("init", "edit", "api", "webhook")
FLAGS = [
    {"name": "notes-owner", "type": "string", "default": "the operator's authors",
     "usage": "Who signs the notes"},
    {"name": "notes-draft", "type": "bool", "default": "false",
     "usage": "Mark the notes as a draft"},
]


def flag(args, name, default):
    """The value of --name (--name v, --name=v; a bare --name is true), as pflag reads it."""
    for i, arg in enumerate(args):
        if arg == "--" + name:
            if i + 1 < len(args) and not args[i + 1].startswith("--"):
                return args[i + 1]
            return "true"
        if arg.startswith("--" + name + "="):
            return arg.split("=", 1)[1]
    return default


def with_entry(project, entry):
    """PROJECT's text with plugins["notes/v1"] set to `entry` (a dict of strings and lists)."""
    lines = ["  " + KEY + ":"]
    for key, value in sorted(entry.items()):
        if isinstance(value, list):
            lines.append("    %s:" % key)
            lines.extend("    - %s" % json.dumps(v) for v in value)
        else:
            lines.append("    %s: %s" % (key, json.dumps(value)))
    block = "\n".join(lines) + "\n"
    # Drop an earlier entry of ours, then add this one under `plugins:`.
    project = re.sub(r"(?m)^  " + re.escape(KEY) + r":\n(    .*\n)*", "", project)
    if re.search(r"(?m)^plugins:\n", project):
        return re.sub(r"(?m)^plugins:\n", "plugins:\n" + block, project, count=1)
    if re.search(r"(?m)^plugins: \{\}\n", project):
        return re.sub(r"(?m)^plugins: \{\}\n", "plugins:\n" + block, project, count=1)
    return project + "plugins:\n" + block


def entry_of(config):
    plugins = (config or {}).get("plugins") or {}
    return dict(plugins.get(KEY) or {})


def scaffold(request):
    args = request.get("args") or []
    universe = dict(request.get("universe") or {})
    config = request.get("config") or {}
    owner = flag(args, "notes-owner", FLAGS[0]["default"])
    draft = flag(args, "notes-draft", "false") == "true"
    entry = entry_of(config)
    entry["owner"] = owner
    if request["command"] in ("init", "edit"):
        name = config.get("projectName", "the project")
        universe["docs/operator-notes.md"] = "# Notes on %s%s\n\nWritten by %s.\n" % (
            name, " (draft)" if draft else "", owner)
    else:
        kind = flag(args, "kind", "")
        if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", kind):
            return {"error": True, "errorMsgs": ["--kind %r is not a kind" % kind]}
        suffix = "" if request["command"] == "create api" else "-webhooks"
        universe["docs/kinds/%s%s.md" % (kind.lower(), suffix)] = "# %s\n\n%s notes, by %s.\n" % (
            kind, request["command"], owner)
        kinds = [k for k in entry.get("kinds", []) if k != kind] + [kind]
        entry["kinds"] = kinds
    universe["PROJECT"] = with_entry(universe.get("PROJECT", ""), entry)
    return {"apiVersion": "v1alpha1", "command": request["command"], "universe": universe}


def main():
    request = json.load(sys.stdin)
    command = request.get("command")
    subcommand = next((a[2:] for a in request.get("args") or [] if a[2:] in SUBCOMMANDS), None)
    if command == "flags":
        response = {"apiVersion": "v1alpha1", "command": "flags", "flags": FLAGS}
    elif command == "metadata":
        response = {"apiVersion": "v1alpha1", "command": "metadata", "metadata": {
            "description": "Adds notes on the project (%s) to docs/." % subcommand,
            "examples": "operator-rs edit --plugins notes/v1 --notes-owner Acme"}}
    elif command in ("init", "edit", "create api", "create webhook"):
        response = scaffold(request)
    else:
        response = {"error": True, "errorMsgs": ["unknown subcommand: %s" % command]}
    json.dump(response, sys.stdout)


if __name__ == "__main__":
    main()
