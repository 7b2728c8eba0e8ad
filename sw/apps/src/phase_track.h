// A host program's phases on the timeline: each phase a slice on the host's
// software track, from the end of the one before to now ("enumerated",
// "firmware running", ...), so a timeline starts at power-on.
#pragma once

#include <string>

#include "trn3/core/timeline.h"

namespace trn3::apps {

class phase_track {
public:
    phase_track(const std::string& process, const std::string& thread)
        : track_(timeline::instance().make_track(process, thread)) {}
    void mark(const std::string& what) {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        timeline::instance().slice(track_, what, last_, now);
        last_ = now;
    }

private:
    timeline::track track_;
    sc_core::sc_time last_;
};

}  // namespace trn3::apps
