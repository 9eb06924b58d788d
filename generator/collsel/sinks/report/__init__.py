"""`collsel report`: a penalty-analysis report (index.html, report.json, PNG and SVG plots).

compute.py gathers every figure into one dict, which is written as report.json; the plots
(plots.py) and the page (templates/report.html.j2) are rendered from that same dict after a JSON
round trip, so every number on the page is one that report.json holds.
"""
