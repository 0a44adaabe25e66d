"""The one shell lexer (``migrator/shell_lex.lex``) and the helpers built on it agree on quotes,
escapes and comments, as POSIX sh reads them."""

from __future__ import annotations

from migrator.rules._shell import code_part, command_segments, in_quotes

from migrator.syntax.shell_lex import lex

# A line in the shape of a real Dockerfile RUN / entrypoint script: escaped quotes inside a
# double-quoted argument, then a comment.
LINE = 'echo "export PATH=\\"${PATH}\\" # not a comment" >> /etc/profile  # a comment'


def test_escaped_quotes_inside_double_quotes_do_not_close_them() -> None:
    words = [lexeme for lexeme in lex(LINE) if lexeme.kind == "word"]
    assert [word.value for word in words] == [
        "echo",
        'export PATH="${PATH}" # not a comment',
        ">>",
        "/etc/profile",
    ]
    assert words[1].quotes == ((5, LINE.index(" >>") - 1, '"'),)


def test_code_part_and_in_quotes_follow_the_lexer() -> None:
    assert code_part(LINE) == LINE[: LINE.index("# a comment")]
    inside = LINE.index("# not")
    assert in_quotes(LINE, inside) == '"'
    assert in_quotes(LINE, LINE.index(">>")) is None
    assert in_quotes("echo 'it''s'", 7) == "'"
    assert in_quotes("echo 'it''s'", 9) is None
    assert in_quotes("echo 'a b", 8) == "'"


def test_single_quotes_escape_nothing_and_comments_start_words() -> None:
    assert code_part("echo 'a\\' # b") == "echo 'a\\' "
    assert code_part("echo a#b # c") == "echo a#b "
    assert code_part("echo \\# not") == "echo \\# not"


def test_command_segments_split_on_operators_and_lines_only_outside_quotes() -> None:
    text = 'pip install "a; b" && pip install c \\\n  d # e; f\nrun'
    segments = [[token.value for token in segment] for segment in command_segments(text)]
    assert segments == [["pip", "install", "a; b"], ["pip", "install", "c", "d"], ["run"]]
