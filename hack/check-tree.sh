#!/usr/bin/env bash
# Fails when git tracks a file that is not a source: an executable binary
# (ELF, Mach-O, PE) or any file over 1 MiB. Build outputs belong in bin/ or
# e2e/.run/, which .gitignore keeps out of the tree.
set -euo pipefail
cd "$(dirname "$0")/.."

git ls-files -z | perl -0ne '
	chomp;
	next unless -f $_;
	my $size = -s _;
	if ($size > 1024 * 1024) { print "check-tree: $_ is $size bytes, over 1 MiB\n"; $bad = 1 }
	open(my $fh, "<:raw", $_) or die "check-tree: $_: $!\n";
	read($fh, my $magic, 4); close $fh;
	if ($magic =~ /^(\x7fELF|\xcf\xfa\xed\xfe|\xce\xfa\xed\xfe|\xfe\xed\xfa[\xce\xcf]|MZ)/) {
		print "check-tree: $_ is an executable binary\n"; $bad = 1;
	}
	END { if ($bad) { print "check-tree: remove these files from git (git rm --cached) and ignore them\n"; exit 1 } }
'
