"""The public site: one module per group of pages.

``pages`` (home, paper, researcher, institution, 404), ``follow`` (follow buttons
and the Following page), ``search``, ``machines`` (robots.txt, llms.txt); RSS feeds
are in :mod:`wovepaper.feeds` and sitemaps in :mod:`wovepaper.sitemaps`.
"""
