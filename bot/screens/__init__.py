"""The screens: what each message of a game shows, and when it is sent or edited."""
