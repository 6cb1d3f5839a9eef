"""Wyoming satellites, one per room, served by this one voiced (issue 29).

`link.py` holds the connection to one satellite, `audio.py` its microphone and speaker as the ear
and the mouth see them, `room.py` a room's own turns, `serve.py` all of them from the config, and
`events.py` what they say on the bus.
"""
