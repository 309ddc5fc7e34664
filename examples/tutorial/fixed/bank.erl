%% The tutorial's program, fixed: the account checks and debits in one
%% step, so no other withdrawal can come between the two.
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
        {withdraw, Amount, From} when Amount =< Balance ->
            From ! {withdraw, ok},
            account(Balance - Amount);
        {withdraw, _, From} ->
            From ! {withdraw, insufficient_funds},
            account(Balance);
        stop ->
            ok
    end.

%% One message: the account decides.
withdraw(Account, Amount) ->
    Account ! {withdraw, Amount, self()},
    receive
        {withdraw, Result} -> Result
    end.
