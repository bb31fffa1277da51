"""
The offline results page, `balgen report ... --html PAGE`: one self-contained
HTML file for a replay run, a modes run, runs compared, a fill or a verify,
its charts drawn by plotly.js inlined from the pinned plotly package.
"""
