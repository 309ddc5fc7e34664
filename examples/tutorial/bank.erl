%% The tutorial's program (README, "Ten minutes with mcerlang"): an
%% account process and two clients that each withdraw 70 from a balance
%% of 100.  At most one withdrawal can succeed; main/0 checks that the
%% final balance accounts for the withdrawals that did.
-module(bank).
-export([main/0, account/1, client/2]).

main() ->
    Account = spawn(bank, account, [100]),
    spawn(bank, client, [self(), Account]),
    spawn(bank, client, [self(), Account]),
    Results = [receive {done, R} -> R end || _ <- [1, 2]],
    Account ! {balance, self()},
    Balance = receive {balance, B} -> B end,
    Account ! stop,
    Withdrawn = 70 * length([ok || ok <- Results]),
    case Balance =:= 100 - Withdrawn of
        true -> ok;
        false -> exit({money_lost, #{withdrawn => Withdrawn, balance => Balance}})
    end.

client(Main, Account) ->
    Main ! {done, withdraw(Account, 70)}.

account(Balance) ->
    receive
        {balance, From} ->
            From ! {balance, Balance},
            account(Balance);
        {set, New} ->
            account(New);
        stop ->
            ok
    end.

%% Reads the balance, then writes the new one.
withdraw(Account, Amount) ->
    Account ! {balance, self()},
    receive
        {balance, Balance} when Balance >= Amount ->
            Account ! {set, Balance - Amount},
            ok;
        {balance, _} ->
            insufficient_funds
    end.
