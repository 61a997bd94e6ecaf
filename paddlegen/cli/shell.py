"""`paddlegen completion SHELL`: the shell's completion script (click's own mechanism)."""

from __future__ import annotations

import click

from paddlegen.cli.common import errors_format_option, stdout_is_output

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_PADDLEGEN_COMPLETE"


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
@errors_format_option
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the completion script of SHELL (bash, zsh or fish) on stdout.

    It completes commands, options, rule ids, spec files and `explain` fields.

    \b
    Examples:
      eval "$(paddlegen completion bash)"        # in ~/.bashrc
      eval "$(paddlegen completion zsh)"         # in ~/.zshrc
      paddlegen completion fish > ~/.config/fish/completions/paddlegen.fish
    """
    from click.shell_completion import get_completion_class

    stdout_is_output()
    root = ctx.find_root()
    script_class = get_completion_class(shell)
    assert script_class is not None  # every SHELLS entry is one of click's
    script = script_class(root.command, {}, root.info_name or "paddlegen", COMPLETE_VAR)
    click.echo(script.source())
