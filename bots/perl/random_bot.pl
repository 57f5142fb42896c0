#!/usr/bin/perl
# A random bot for every game as a stdin/stdout program, in Perl with core modules only
# (JSON::PP ships with perl): no HTTP code, `referee bridge` does that part.
#
#   referee bridge --port 8001 -- perl bots/perl/random_bot.pl [seed]
#   referee play --game aladino --bot "cmd:perl bots/perl/random_bot.pl 7" --bot ...
#
# Each line on stdin is one JSON message. A decision is answered with one line
# {"action": <one of legal_actions>, "log": "new"} (it reads no log: "new" asks for its new
# entries only, docs/bots.md); an update gets no answer; the result notice ({"type":
# "result", ...}) ends the match. Debugging output goes to stderr (the bridge keeps it in
# the match's log).
use strict;
use warnings;
use JSON::PP;

$| = 1;    # stdout is a pipe: send every answer at once
srand(defined $ARGV[0] ? $ARGV[0] : 1);
my $json = JSON::PP->new->utf8;

while (my $line = <STDIN>) {
    my $message = eval { $json->decode($line) };
    my $type = ref $message eq 'HASH' ? ($message->{type} // '') : '';
    last if $type eq 'result';
    next if $type eq 'update';    # never answered: the answer would be the next decision's
    my $legal = ref $message eq 'HASH' ? $message->{legal_actions} : undef;
    if (ref $legal ne 'ARRAY' || !@$legal) {
        print STDERR "no legal_actions in: ", substr($line, 0, 200), "\n";
        print $json->encode({error => 'no legal_actions in the message'}), "\n";
        next;
    }
    my $action = $legal->[int(rand(scalar @$legal))];
    print $json->encode({action => $action, log => 'new'}), "\n";
}
