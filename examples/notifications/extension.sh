#!/bin/sh
# A notification service extension for `geotrigger replay --service-extension`, in shell.
# Each push arrives as one JSON line: {"content":{…},"device":"…","request":"…"}.
# It answers one line, {"content":{…}}: here it "decrypts" the payload's "cipher" key
# (ROT13, for the example) into the body. Real ones decrypt, download attachments, translate.
while IFS= read -r line; do
  cipher=$(printf '%s\n' "$line" | sed -n 's/.*"cipher":"\([^"]*\)".*/\1/p')
  title=$(printf '%s\n' "$line" | sed -n 's/.*"title":"\([^"]*\)".*/\1/p')
  plain=$(printf '%s\n' "$cipher" | tr 'A-Za-z' 'N-ZA-Mn-za-m')
  printf '{"content":{"title":"%s","body":"%s","userInfo":{"decrypted":true}}}\n' "$title" "$plain"
done
