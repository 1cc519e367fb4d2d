"""Markdown, HTML and JSON privacy reports rendering what the other packages computed."""
