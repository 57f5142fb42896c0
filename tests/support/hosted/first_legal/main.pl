use strict;
use warnings;
$| = 1;
# The first element of "legal_actions": a balanced {...}, strings skipped over.
while (my $line = <STDIN>) {
    next if $line =~ /"type":"(update|result)"/;
    my $at = index($line, '"legal_actions":[');
    next if $at < 0;
    my $start = index($line, '{', $at);
    my ($depth, $in_string, $i) = (0, 0, $start);
    for (; $i < length($line); $i++) {
        my $c = substr($line, $i, 1);
        if ($in_string) {
            if ($c eq '\\') { $i++; } elsif ($c eq '"') { $in_string = 0; }
        } elsif ($c eq '"') { $in_string = 1; }
        elsif ($c eq '{') { $depth++; }
        elsif ($c eq '}') { $depth--; last if $depth == 0; }
    }
    print '{"action":' . substr($line, $start, $i - $start + 1) . "}\n";
}
